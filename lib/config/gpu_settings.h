// The GPU transport's tuning settings as the settings registry lists them: their defaults and bounds.
// What they mean, and how the transport uses them, is lib/gpu/kernel_choice.h's (GpuSettings,
// KernelPolicy); they are read through the registry (settings_registry.h) like every PEERREDUCE_* setting.
// Every rank must give the same values (the kernels' protocols differ); nothing compares them.
#pragma once

#include <cstdint>

namespace peerreduce::gpu {

// One-shots up to this size run as lines (on 4 x H200 lines beat the fused pull one-shot at every
// size to 256 KiB: docs/PERF.md); PEERREDUCE_GPU_LL_MAX_BYTES overrides it.
inline constexpr std::uint64_t kDefaultLowLatencyMaxBytes = std::uint64_t{256} << 10;
// At two ranks a one-shot writes its input to one peer only, so lines carry more: on 2 x H200 (fp32, out of
// place, graph of 20; docs/PERF.md) 512 KiB took 5.9 us as lines against 10.9 by the fused pull (NCCL 9.9),
// 1 MiB 8.8 against 12.5 (NCCL 13.0); 1 MiB is the most a rank's lines hold at two ranks. The default
// only: PEERREDUCE_GPU_LL_MAX_BYTES, when set, is the limit at every world size.
inline constexpr std::uint64_t kDefaultLowLatencyTwoRankMaxBytes = std::uint64_t{1} << 20;
// Two-shots up to this size run as lines (PEERREDUCE_GPU_LL2_MAX_BYTES; 0 turns them off). On
// 4 x H200 at 1 MiB: 15.0-15.3 us in four runs of nine replays, against 26 for the fused pull two-shot
// and 25 for the pull one-shot. They were off by default while some runs took 3 to 20 times longer;
// waiting threads now pause between polls after the first few, and no run has been slow since
// (docs/PERF.md item 8).
inline constexpr std::uint64_t kDefaultLowLatencyTwoShotMaxBytes = std::uint64_t{1} << 20;
// Direct reduce-scatters, all-gathers and broadcasts whose block (one rank's count x the element size)
// is at most this run as lines (PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES; 0 turns them off). Each writer
// sends each peer one block there. On 4 x H200 (fp32, out of place, graph of 20; docs/PERF.md) a 2 MiB
// reduce-scatter (512 KiB blocks) took 13.0 us as lines against 23.8 in the plan interpreter (NCCL 16.2),
// an all-gather 13.5 against 23.7 (NCCL 18.3); 1 MiB blocks are past the tuning table's switch to
// recursive halving and doubling at 4 ranks, so 512 KiB is the measured limit.
inline constexpr std::uint64_t kDefaultCollectiveLinesMaxBytes = std::uint64_t{512} << 10;
// At two ranks a writer's lines hold 1 MiB (one peer), as the one-shot's do, and nothing beats lines there:
// on 2 x H200 (fp32, out of place, graph of 20; docs/PERF.md) a 1 MiB broadcast took 11.9 us by the tree in
// the interpreter (13.6 by the one-shot plan there) against NCCL's 11.5, a 2 MiB all-gather or
// reduce-scatter (1 MiB blocks) 16.5-16.7 us in nccl-tests against NCCL's 17.7, where 512 KiB blocks as lines
// took 3.3-3.7 us. The default only: PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES, when set, holds at every world size.
inline constexpr std::uint64_t kDefaultCollectiveLinesTwoRankMaxBytes = std::uint64_t{1} << 20;
// Where some rank's region is pinned host memory (host-staged links), one-shots, two-shots and direct
// collectives' blocks up to this size run as lines (PEERREDUCE_GPU_LL_HOST_MAX_BYTES; 0 turns them off
// there). A line is {data, flag} in each 8-byte half, which a PCIe write to host memory delivers whole
// (NCCL's LL protocol relies on the same), so one store across PCIe and one poll back carry the data and
// its signal: no fence, no separate flag round trip. Past this, bytes decide (lines carry their flags, so
// twice the data crosses PCIe, to every peer) and the interpreter's kernels run. Measured on one H200 with
// the ranks as processes sharing it under MPS, every link host-staged (docs/perf/h200x1-host-lines/; all
// ranks' bytes cross the one PCIe link, so bytes weigh n times what they do on n GPUs): four ranks'
// allreduce 4 KiB 8.3 us as lines against 28.6, 16 KiB 16.4 against 30.2, 32 KiB 31.0 against 35.1, 64 KiB
// 59.7 against 48.1; two ranks' 4 KiB 3.5 against 14.2, 256 KiB 39.0 against 51.1, 512 KiB 77.0 against
// 89.1, 1 MiB 154.7 against 144.6. With the bytes weighing a quarter on four GPUs, 64 KiB; at two ranks
// 512 KiB. The default only: PEERREDUCE_GPU_LL_HOST_MAX_BYTES, when set, holds at every world size.
inline constexpr std::uint64_t kDefaultHostLinesMaxBytes = std::uint64_t{64} << 10;
inline constexpr std::uint64_t kDefaultHostLinesTwoRankMaxBytes = std::uint64_t{512} << 10;
// Two-shots from this size on push their data (PEERREDUCE_GPU_PUSH_MIN_BYTES; 0 turns pushing off).
inline constexpr std::uint64_t kDefaultPushMinBytes = std::uint64_t{2} << 20;
// Two-rank one-shots past the lines from this size on push their input into the peer's scratch
// (PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES; 0 turns it off). On 2 x H200 (fp32, out of place, graph of 20;
// docs/PERF.md) the pushing one-shot beat the push two-shot at every size from 1 MiB: 2 MiB 14.2 us against
// 19.6 (NCCL 27.5), 4 MiB 20.5 against 26.2, 16 MiB 62.3 against 64.8 (NCCL 76.6), 64 MiB 249 against 253;
// below 2 MiB the lines and the pulling one-shot are as fast (1 MiB: 8.7 us pushed).
inline constexpr std::uint64_t kDefaultPushOneShotMinBytes = std::uint64_t{2} << 20;
// Each block of the two-rank pushing one-shot moves its slice in pieces of this many bytes: it pushes piece
// j, then, while those stores cross the link, folds piece j - 1, so the link is not idle while the
// multiprocessors fold (PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES; 0: one piece, everything pushed before
// anything is folded). One pass of 512 threads x 4 vectors x 16 bytes; whole pieces, at most 16 a block
// (kernels/push_kernels.cu). On 2 x H200 (fp32, out of place, graph of 20; docs/PERF.md) 32 KiB beat 16, 24,
// 48, 64 and 128 KiB from 16 MiB up: 64 MiB 218 us against 252 in one piece, 256 MiB 868 against 1006.
inline constexpr std::uint64_t kDefaultPushOneShotPieceBytes = std::uint64_t{32} << 10;
// A streamed pushing kernel's pieces (PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES; 0: half a block's region of the
// ring). On 2 x H200 (fp32, out of place, graph of 20; docs/PERF.md "2 x H200 at 4b16c2e") 64 KiB beat 16,
// 32, 96, 128, 256 and 512 KiB streamed at 64 and 256 MiB: allreduce 256 MiB 808 us (32 KiB 883, 128 KiB
// 987), broadcast 787 (850, 912), reduce-scatter 417 (432, 512), all-gather 412 (439, 492). Unstreamed,
// 64 KiB lost to 32 (256 MiB allreduce 916 against 881), so each keeps its own setting.
inline constexpr std::uint64_t kDefaultPushStreamPieceBytes = std::uint64_t{64} << 10;
// Two-rank direct reduce-scatters, all-gathers and broadcasts past the lines whose block (count x element
// size) is at least this push their data into the peer's scratch instead of running in the interpreter
// (PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES; 0 turns it off). Every block past the two-rank lines (1 MiB)
// by default: the interpreter's one round of remote loads against posted stores, as for the one-shot.
inline constexpr std::uint64_t kDefaultPushCollectiveMinBytes = std::uint64_t{1} << 20;
// Where some region is pinned host memory (PEERREDUCE_GPU_PUSH_HOST, on by default), the two-rank pushing
// one-shot from this many bytes and the pushing collectives from blocks of kDefaultHostPushCollectiveMinBytes,
// unless PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES / _COLLECTIVE_MIN_BYTES are given. Every byte crosses PCIe
// twice either way (the sender's stores up, the receiver's loads down), but the pieces keep both directions
// of each link busy at once where the pull runs its copy up and its loads down one after the other. On
// 2 x H200 with every link host-staged (docs/PERF.md "2 x H200 at 9e477c7", NCCL with P2P off in the same
// run) the push against the pull: allreduce 4 MiB 309 us against 266, 16 MiB 725 against 980, 256 MiB 8148
// against 15601 (NCCL 9796); reduce-scatter and all-gather 16 MiB 468-476 against 384-386, 64 MiB 1255-1365
// against 1383-1390, 256 MiB 4315-4351 against 5476-5596; broadcast 16 MiB 678 against 673, 64 MiB 1842
// against 2671, 256 MiB 6063 against 10525.
inline constexpr std::uint64_t kDefaultHostPushOneShotMinBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kDefaultHostPushCollectiveMinBytes = std::uint64_t{32} << 20;
// The largest world whose direct reduce-scatters, all-gathers and broadcasts past the lines push: every rank
// stores its blocks into every peer's scratch (a broadcast relays: the root stores each receiver a range, the
// receivers pass theirs on), each sender in a part of the receiver's ring of its own (kernels/piece_ring.h),
// so they always stream through the lease (PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS). Two, so more ranks keep the
// interpreter, until the pushing kernels are measured at more ranks.
inline constexpr int kDefaultPushCollectiveMaxRanks = 2;
// Bytes a block should have to itself before another is worth launching: one pass of 512 threads
// x 4 vectors x 16 bytes (PEERREDUCE_GPU_BYTES_PER_BLOCK).
inline constexpr std::uint64_t kDefaultBytesPerBlock = std::uint64_t{32} << 10;
// Line kernels: one 16-byte vector per thread of a 512-thread block (2 to 8 KiB measured alike;
// PEERREDUCE_GPU_LL_BYTES_PER_BLOCK).
inline constexpr std::uint64_t kDefaultLineBytesPerBlock = std::uint64_t{8} << 10;
// Least bytes per block either setting accepts (1 KiB): a lower bound on how finely work is split.
inline constexpr std::uint64_t kMinBytesPerBlock = 1024;
inline constexpr int kMaxKernelBlocks = 256;
// Most blocks of the fused pulling kernels (one-shot and two-shot pull): chosen when every waiting
// thread still read the host-mapped abort word on each poll, which made more blocks slower. Measured
// since on 4 x H200 for the pulls that run in the interpreter: a direct reduce-scatter of 256 MiB took
// 950 us with 32 blocks and 1161 with 132 (more readers of one peer's memory contend), so the fused
// pulls keep it (PEERREDUCE_GPU_PULL_MAX_BLOCKS moves it: where regions lie in host memory the pulls'
// loads cross PCIe, whose latency, not contention, may bound them).
// The plan interpreter has its own cap (kDefaultInterpreterMaxBlocks, below).
inline constexpr int kDefaultMaxBlocks = 32;
// Most blocks of the plan interpreter (PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS): every multiprocessor (the
// agreed cap, at most kMaxKernelBlocks), as the push two-shot and the line kernels. On 4 x H200 (fp32,
// out of place, graph of 20) 132 blocks against 32: all-gather by recursive doubling 256 MiB 799 us
// against 880, 16 MiB 54.8 against 61.4; broadcast ring 256 MiB 1341 against 1390; reduce-scatter ring
// 256 MiB 829 against 833, recursive halving 16 MiB 56.5 against 60.7 (docs/PERF.md). It was 32 while
// every waiting thread read the host-mapped abort word on each poll, which made more blocks slower.
inline constexpr int kDefaultInterpreterMaxBlocks =
    kMaxKernelBlocks;  // kernels/device_plan.h kMaxBlocks (checked where both are seen)

}  // namespace peerreduce::gpu
