// The GPU transport's host-staged links, host-only decisions (no GPU header): which ranks place their
// peer-reachable region in pinned host memory, how each pair is reached, which kernels may run, and
// how many bytes an operation moves through host memory. Unit-tested without a GPU
// (tests/lib/gpu/host_staging_test.cc); gpu_transport.cc does what they say.
//
// The design (docs/ARCHITECTURE.md, GPU backend): a rank that has any host-staged peer places its whole
// peer-reachable region (probe token, counters, receive lines, scratch) in pinned host memory mapped
// into every GPU, so a peer over a host-staged link reads its scratch and writes its counters through
// mapped device pointers: the kernels are unchanged, each load or store crossing PCIe, and the waits
// keep their deadlines and abort word. The placement is decided at openSymmetric, before any peer's
// record is known, from what every rank knows alike (the configuration's forced pairs) and what the
// runtime says of this device (it lacks peer access to some visible device).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/kernel_choice.h"
#include "gpu/peer_record.h"
#include "peerreduce/plan.h"
#include "peerreduce/status.h"

namespace peerreduce::gpu {

// Whether `rank` places its region in pinned host memory: the configuration forces a pair of it
// host-staged (`forced`, world x world row-major, empty for none), or its device cannot reach every
// other visible device directly (`device_reaches_all` false), so some peer may need to reach it through
// host memory.
bool placeRegionInHost(const std::vector<std::uint8_t>& forced, int rank, int world_size, bool device_reaches_all);

// `forced` (empty or world x world) with `pairs` (world x world) added: the pairs whose access probe
// failed fall back to host-staged links on top of the ones the configuration forces, so placeRegionInHost
// and choosePeerPath treat them alike. kInvalidArgument for a matrix of the wrong size.
Status addHostStagedPairs(std::vector<std::uint8_t>& forced, const std::vector<std::uint8_t>& pairs, int world_size);

// How `rank` reaches `peer`'s region.
enum class PeerPath {
  kDirect,      // the peer's device memory: IPC or this process's pointer, over NVLink / XGMI / PCIe peer access
  kHostMapped,  // the peer's pinned host memory, through a mapped device pointer (a host-staged link)
};

struct PeerReach {
  int rank = 0;
  int peer = 0;
  bool forced = false;      // the configuration makes the pair host-staged
  bool peer_access = true;  // the runtime allows peer access both ways (or one device)
  RegionPlacement peer_placement = RegionPlacement::kDevice;
  RegionPlacement own_placement = RegionPlacement::kDevice;
};

// The path for a pair, or kUnavailable naming both ranks when the pair needs host staging but one side's
// region is in device memory (its rank saw peer access to every device: devices differ in what they
// report, or the ranks run on different machines), with the mask that forces it everywhere.
StatusOr<PeerPath> choosePeerPath(const PeerReach& reach);

// The kernels a world of `world_size` with any host-placed region may run: lines up to
// KernelPolicy::host_lines_max_bytes (PEERREDUCE_GPU_LL_HOST_MAX_BYTES) within this world size's line
// limits, then the pulling and interpreted kernels, and at two ranks the pushing one-shot and collectives from
// the host thresholds (KernelPolicy::push_host, PEERREDUCE_GPU_PUSH_HOST; kDefaultHostPushOneShotMinBytes
// says what was measured); the pushing two-shot never. A line carries its flag in
// each 8-byte half, and a PCIe write to host memory delivers an aligned 8-byte half whole (NCCL's LL
// protocol relies on the same), so a writer's store into a peer's host-placed lines and the peer's poll
// are the whole exchange: one crossing each way, no fence, no separate signal. Past the cap the flags'
// doubled bytes cost more than the round trips they save. Pushing into a peer's host memory crosses PCIe
// twice for each byte, as the pull does (the owner's copy of its input up, the peer's load down), but the
// pushing kernels' pieces keep both directions of each link busy at once where the pull makes two passes:
// they win from tens of MiB, the pull below. Every rank sees the same records, so every rank chooses alike.
KernelPolicy hostStagedKernelPolicy(KernelPolicy policy, int world_size);

// The chunk indices (Step::chunk) of `rank`'s copy and reduce steps, once per scratch access (read or
// write) to a rank whose region is in host memory (`host_placed[r]`; private slots excepted, which stay
// on the device): the operation's traffic through pinned host memory, counted in the pinned pool's
// statistics.
std::vector<std::int32_t> stagedChunkAccesses(const Plan& plan, int rank, const std::vector<bool>& host_placed);
// The bytes those accesses move for one operation of `layout` with elements of `elem_size` bytes.
std::uint64_t stagedBytes(const std::vector<std::int32_t>& chunks, const ChunkLayout& layout, std::size_t elem_size);

// The bytes a line kernel's launch on `rank` moves through pinned host memory, which replace its plan's
// (stagedChunkAccesses) when the operation runs as lines: a line carries 8 data bytes in 16, stored into
// the receiver's lines (host traffic where the receiver's region is host-placed) and polled there (where
// this rank's own is). `bytes`: the operation's bytes per block (count x element size); `root`:
// broadcast's. One-shot, reduce-scatter and all-gather lines send a block to every peer and take one from
// each; two-shot lines send each owner its shard and every peer the owned shard's result; broadcast lines
// go from the root to every other rank, each of which also stores one presence line into every peer.
std::uint64_t lineStagedBytes(KernelChoice choice, std::uint64_t bytes, int rank, int root,
                              const std::vector<bool>& host_placed);

}  // namespace peerreduce::gpu
