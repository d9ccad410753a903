// Push kernels (compiled per group of element types by kernels/typed_kernels_*.cu; launched through
// kernels/push_kernels.cu): the two-shot program, at two ranks the one-shot and the direct broadcast, and the
// direct reduce-scatter and all-gather (any world the host allows), with every transfer between ranks a write into the
// peer's memory (posted over the link) instead of a read of it (a round trip per load). They fold as the plans do, in
// rank order, so the bits are the plans'; they signal on a counter no plan uses and advance their own bases per block,
// so they mix with the fused, line and interpreted kernels on one communicator. The host chooses them
// (lib/gpu/kernel_choice.h); kernels/fused_kernels.cu launches them through launchPushKernel.
#pragma once

#include "dispatch.h"
#include "fused_device.cuh"
#include "piece_ring.h"
#include "plan_kernel_launch.h"
#include "typed_launch.h"

namespace peerreduce::gpu::push {
// The kernels and their helpers: this file's own in each group's file.
namespace {

// Push two-shot: the two-shot program with every transfer between ranks a write into the peer's memory
// (posted over the link) instead of a read of it (a round trip per load), for large operations.
// Scratch slot q of rank r first holds rank q's input for chunk r (the reduce reads it locally), then,
// once r has consumed it, chunk q's result from its owner q (the gather copies it locally). The fold
// is the plan's, in rank order, so the bits are the plan's: under a floating avg the scattered input is
// premultiplied as the plan's published copy is, and so is r's own term, read from its send buffer.
// Slots 0..n-1 only: within the plan's.
//
// Signals go on kPushFlag, a counter no plan uses, four per operation from each peer's block b:
// entered (its memory is free: its entry fence passed, its earlier operations are over), ready (its
// input for my chunk is in my slot), consumed (it read its slots, so results may overwrite them),
// result (its chunk's result is in my slot). Each block advances its own bases by four, so fused,
// pushed and interpreted operations can follow one another. Slices are fixed by the chunk capacity,
// not each chunk's size, so block b's slices of different chunks in one slot never overlap another
// block's.
constexpr int kPushFlag = kMaxDeviceFlags - 1;
constexpr std::uint64_t kPushSignals = 4;

template <typename T>
__device__ BlockSlice capacitySliceOf(const LaunchArgs& a, int chunk) {
  return sliceBy<T>(a, chunk, true);
}

// Waits for the `nth` kPushFlag signal of this operation from `peer`'s block of this index.
__device__ bool waitForPush(const LaunchArgs& a, int peer, std::uint64_t nth, std::uint64_t step) {
  const std::uint32_t index = counterIndex(peer, kPushFlag, static_cast<int>(blockIdx.x));
  return waitFor(a, a.peers->counters[a.rank] + index, a.control->base[index] + nth, step, peer);
}

template <typename T>
__device__ void copyChunkSlice(unsigned char* dst, const unsigned char* src, const BlockSlice& s) {
  if (s.hi > s.lo) copySlice(dst + s.lo * sizeof(T), src + s.lo * sizeof(T), (s.hi - s.lo) * sizeof(T));
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) pushTwoShotKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const int n = a.world_size;
  const int r = a.rank;
  signalEveryPeer(a, kPushFlag);  // entered
  // Scatter: my input's chunk c into rank c's slot r, once rank c entered.
  for (int k = 1; k < n; ++k) {
    const int c = (r + k) % n;
    if (!waitForPush(a, c, 1, kFenceStep)) return;
    const BlockSlice s = capacitySliceOf<T>(a, c);
    if (s.hi > s.lo) publishSlice<T>(a, scratchOf(a, c, r), inputOf(a) + s.begin * sizeof(T), s);
  }
  signalEveryPeer(a, kPushFlag);  // ready: fenced, so my writes are visible before it
  // Reduce my chunk, in rank order, from my input and my slots (all local reads).
  std::uint64_t step = a.ready_wait_step;
  for (int q = 0; q < n; ++q) {
    if (q != r && !waitForPush(a, q, 2, step++)) return;
  }
  const BlockSlice mine = capacitySliceOf<T>(a, r);
  {
    __shared__ T* sources[kMaxRanks];
    __shared__ std::uint8_t from_send[kMaxRanks];  // this rank's own term is read from its send buffer
    __syncthreads();
    for (int q = static_cast<int>(threadIdx.x); q < n; q += static_cast<int>(blockDim.x)) {
      const unsigned char* base = q == r ? inputOf(a) + mine.begin * sizeof(T) : scratchOf(a, r, q);
      sources[q] = reinterpret_cast<T*>(const_cast<unsigned char*>(base) + mine.lo * sizeof(T));
      from_send[q] = q == r ? 1 : 0;
    }
    __syncthreads();
    if (mine.hi > mine.lo) {
      reduceSlice<T, Op>(reinterpret_cast<T*>(outputOf(a) + (mine.begin + mine.lo) * sizeof(T)), sources, n,
                         mine.hi - mine.lo, avgStep(a, true, from_send));
    }
  }
  signalEveryPeer(a, kPushFlag);  // consumed: fenced, so my reads of my slots are done before it
  // Push my chunk's result into every peer's slot r, once that peer consumed its slots.
  step = a.result_wait_step;
  for (int k = 1; k < n; ++k) {
    const int q = (r + k) % n;
    if (!waitForPush(a, q, 3, step + static_cast<std::uint64_t>(q < r ? q : q - 1))) return;
    copyChunkSlice<T>(scratchOf(a, q, r), outputOf(a) + mine.begin * sizeof(T), mine);
  }
  signalEveryPeer(a, kPushFlag);  // result
  // Gather: chunk q's result from my slot q into my output.
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    if (!waitForPush(a, q, 4, step++)) return;
    const BlockSlice s = capacitySliceOf<T>(a, q);
    copyChunkSlice<T>(outputOf(a) + s.begin * sizeof(T), scratchOf(a, r, q), s);
  }
  // This block's bases: only it reads and writes them, so no other block needs to finish first.
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < n && peer != r)
    a.control->base[counterIndex(peer, kPushFlag, static_cast<int>(blockIdx.x))] += kPushSignals;
}

// Push one-shot, two ranks only: the one-shot program with its one transfer a write into the peer's
// memory instead of a read of it. Each rank stores its input (premultiplied under a floating avg, as the
// plan's published copy is) into the peer's scratch slot 0, which at two ranks only that peer's one
// writer uses, then folds, in rank order, its own input (from its send buffer) and the peer's (from its
// own slot 0): every read local, no copy of its own input into scratch, one signal round for the data.
// At two ranks a one-shot moves what a two-shot moves (the whole input each way) with one such round
// instead of two.
//
// Pieces: each block moves its slice in pieces (LaunchArgs::push_piece_bytes, at most kMaxPushPieces). It
// pushes piece j, and while those stores cross the link it waits for the peer's piece j - 1 and folds it
// (local reads and writes); only then does it fence and signal piece j. With one piece per block every
// block pushed its whole slice before any folded, and the blocks run in step, so the link idled while the
// multiprocessors folded. Piece boundaries are the same on both ranks: both slice the same count alike.
//
// Signals go on kPushFlag, 1 + pieces per operation from the peer's block b: entered (its slot is free:
// its entry fence passed, so its earlier operations are over, its own reads of the slot included) and one
// ready per piece (that piece of my input is in its slot; fenced, so the writes are visible before it).
// Each block advances its own bases by 1 + pieces, so this mixes with the plan's, the fused and the line
// kernels on one communicator as the push two-shot does. In place, block b publishes a piece and folds the
// same piece over the input only after the barrier of that piece's signal: one block, program order.
constexpr int kMaxPushPieces = 16;

// The pieces a block splits `n` elements of its slice into, and the elements of each (a whole number of
// vectors, so every piece but the last starts and ends on a vector). Whole pieces only (rounded down): a
// slice of less than two pieces stays one. Measured on 2 x H200 with 32 KiB pieces rounded up, an 8 MiB
// operation (63.5 KiB a block) split in two took 36.4 us against 34.0 in one, where 16 MiB and more gained.
template <typename T>
__device__ int pushPieces(const LaunchArgs& a, std::uint64_t n, std::uint64_t* per_piece) {
  constexpr std::uint64_t kPerVector = kVectorBytes / sizeof(T);
  const std::uint64_t vectors = (n + kPerVector - 1) / kPerVector;
  std::uint64_t pieces = 1;
  if (a.push_piece_bytes != 0) {
    const std::uint64_t piece_vectors = a.push_piece_bytes / kVectorBytes > 0 ? a.push_piece_bytes / kVectorBytes : 1;
    pieces = min(max(vectors / piece_vectors, std::uint64_t{1}), static_cast<std::uint64_t>(kMaxPushPieces));
  }
  *per_piece = (vectors + pieces - 1) / pieces * kPerVector;
  return static_cast<int>(pieces);
}

// Piece `j` of block slice `s`, in the slice's coordinates (empty past the slice's end).
__device__ BlockSlice pieceOf(const BlockSlice& s, std::uint64_t per_piece, std::uint64_t j) {
  BlockSlice p = s;
  p.lo = min(s.lo + j * per_piece, s.hi);
  p.hi = min(p.lo + per_piece, s.hi);
  return p;
}

// Where a block's pieces go in the peer's slot 0 (kernels/piece_ring.h). An operation that fits the scratch
// (LaunchArgs::ring_bytes 0) gives each piece a place of its own, its own offset (pushPieces cuts the slice). A
// streamed one (ring_bytes set: one launch for an operation larger than the scratch, instead of one launch
// per segment) cycles each block's pieces through a region of the ring. Why: every segment paid the pieces'
// pipeline filling and draining and a signal round (about 8-12 us each on 2 x H200: 256 MiB in eight 32 MiB
// segments took 895 us where one segment took 840, docs/PERF.md).
template <typename T>
__device__ PieceRing pieceRingOf(const LaunchArgs& a, std::uint64_t n) {
  if (a.ring_bytes != 0) {
    // Past two ranks every sender has a part of the ring of its own (senderPartBytes); at two, the whole.
    const std::uint64_t part_bytes = senderPartBytes(a.ring_bytes, a.world_size);
    return streamedPieceRing(n, sizeof(T), part_bytes, a.push_piece_bytes, gridDim.x, blockIdx.x);
  }
  PieceRing r;
  std::uint64_t per_piece = 0;
  r.pieces = static_cast<std::uint64_t>(pushPieces<T>(a, n, &per_piece));
  r.per_piece = per_piece;
  return r;
}

// Where in `receiver`'s slot 0 `sender`'s piece `k` (`p`) lives: its place in the sender's part of the ring
// (the part is the whole ring at two ranks, and unused unstreamed).
template <typename T>
__device__ unsigned char* pushedPlace(const LaunchArgs& a, const PieceRing& r, const BlockSlice& p, std::uint64_t k,
                                      int sender, int receiver) {
  const std::uint64_t part = a.ring_bytes == 0 ? 0
                                               : static_cast<std::uint64_t>(senderPart(sender, receiver)) *
                                                     senderPartBytes(a.ring_bytes, a.world_size);
  return scratchOf(a, receiver, 0) + part + placeOfPiece(r, p.lo, k) * sizeof(T);
}

// Folds piece `k` (`p`) of every rank's term, in rank order, into `output`: my own from `own` (the send
// buffer), each peer's from its place in my slot 0. The one-shot's whole input and output, a
// reduce-scatter's block of its own.
template <typename T, typename Op>
__device__ void foldPushedPiece(const LaunchArgs& a, const PieceRing& r, const BlockSlice& p, std::uint64_t k,
                                const unsigned char* own, unsigned char* output) {
  __shared__ T* sources[kMaxRanks];
  __shared__ std::uint8_t from_send[kMaxRanks];  // this rank's own term is read from its send buffer
  __syncthreads();                               // the previous piece's fold is done with sources
  for (int q = static_cast<int>(threadIdx.x); q < a.world_size; q += static_cast<int>(blockDim.x)) {
    const unsigned char* term =
        q == a.rank ? own + (p.begin + p.lo) * sizeof(T) : pushedPlace<T>(a, r, p, k, q, a.rank);
    sources[q] = reinterpret_cast<T*>(const_cast<unsigned char*>(term));
    from_send[q] = q == a.rank ? 1 : 0;
  }
  __syncthreads();
  if (p.hi > p.lo) {
    reduceSlice<T, Op>(reinterpret_cast<T*>(output + (p.begin + p.lo) * sizeof(T)), sources, a.world_size, p.hi - p.lo,
                       avgStep(a, true, from_send));
  }
}

// The direct reduce-scatter, all-gather and broadcast, pushed: the push one-shot's protocol (entered, then one
// ready per piece, on kPushFlag) with each plan's one transfer a write into the peer's scratch slot 0 instead
// of a read of the peer's. Broadcast at two ranks only; reduce-scatter and all-gather at more ranks send to
// every peer and take from every peer, each sender in a part of the receiver's ring of its own (always
// streamed there: the plan's one slot holds one sender's block), and signal ready for piece j only after
// taking piece j - 1 from every sender, so the reuse rule per receiver is the two-rank one
// (kernels/piece_ring.h; modelled at three to five ranks in tests/kernels/piece_ring_test.cc). Why: the interpreter
// runs those plans with every remote access a load (a round trip over the link each), and a large one after a copy of
// the input into its own scratch; pushed, the data crosses the link once as posted stores and every read is local, as
// for the allreduce's push one-shot (docs/PERF.md).
//   allreduce (the one-shot): each rank pushes its input and folds its own input and its slot;
//   reduce-scatter: each rank pushes the peer's block of its input (premultiplied under a floating avg, as
//     the plan's published copy is) and folds its own block and its slot in rank order into its output;
//   all-gather: each rank pushes its block, copies it into its own block of the output, and copies its
//     slot into the peer's block;
//   broadcast: the root pushes its buffer and copies it to its output; the other rank copies its slot.
// A broadcast's receiver sends no data: it signals `entered` and, streamed, one acknowledgement per piece it
// took from the ring (the root's reuse of that place waits for it). Each side advances its bases by the
// signals the other sends. Signals from one peer's block arrive in the order sent (one counter), so a count
// that reaches piece j's number is piece j's signal even when the peer has run on into its next operation
// and signalled `entered` again. Streamed, a sending peer's ready for piece m follows its fold or copy of
// piece m - 1 (same loop iteration), so it also says that piece's place is free again.
enum class PushedCollective { kAllReduce, kReduceScatter, kAllGather, kBroadcast };

template <typename T>
__device__ const unsigned char* sendBlockOf(const LaunchArgs& a, int block) {
  return inputOf(a) + static_cast<std::uint64_t>(block) * a.send_block_stride * sizeof(T);
}
template <typename T>
__device__ unsigned char* recvBlockOf(const LaunchArgs& a, int block) {
  return outputOf(a) + static_cast<std::uint64_t>(block) * a.recv_block_stride * sizeof(T);
}

// Piece `p` of this rank's own block copied into its output (the all-gather's own block, the root's
// buffer); nothing where the two are one memory (in place).
template <typename T>
__device__ void copyOwnPiece(const LaunchArgs& a, unsigned char* output, const unsigned char* own,
                             const BlockSlice& p) {
  if (output == own || p.hi <= p.lo) return;
  const std::uint64_t at = (p.begin + p.lo) * sizeof(T);
  copyFromSend<T>(a, reinterpret_cast<T*>(output + at), reinterpret_cast<const T*>(own + at), p.hi - p.lo);
}

template <typename T, typename Op, PushedCollective C>
__global__ void __launch_bounds__(kPlanKernelThreads) pushPiecesKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  // The one-shot and broadcast run at two ranks only, reduce-scatter and all-gather at any (the host chooses).
  const int n = a.world_size;
  const int r = a.rank;
  constexpr bool kReduces = C == PushedCollective::kAllReduce || C == PushedCollective::kReduceScatter;
  const bool broadcast = C == PushedCollective::kBroadcast;
  const bool sends = !broadcast || r == a.root;
  const bool receives = !broadcast || r != a.root;  // some peer sends to this rank
  signalEveryPeer(a, kPushFlag);                    // entered
  const BlockSlice s = sliceOf<T>(a, 0);            // one chunk (per block): the operation's count
  const PieceRing ring = pieceRingOf<T>(a, s.hi > s.lo ? s.hi - s.lo : 0);
  const bool acknowledges = !sends && ring.places != 0;  // a broadcast's receiver, streamed
  const bool acknowledged = !receives && ring.places != 0;
  // This rank's own term or block, and where it lands in its output.
  const unsigned char* own = sendBlockOf<T>(a, C == PushedCollective::kReduceScatter ? r : 0);
  unsigned char* own_output = recvBlockOf<T>(a, C == PushedCollective::kAllGather ? r : 0);
  for (std::uint64_t j = 0; j <= ring.pieces; ++j) {
    if (sends && j < ring.pieces) {
      const BlockSlice p = pieceOf(s, ring.per_piece, j);
      // Streamed, the place last held piece j - places: wait until that peer is done with it.
      const std::uint64_t free_after = placeFreeSignal(ring, j, acknowledged);
      for (int k = 1; k < n; ++k) {
        const int q = (r + k) % n;
        // Its scratch is free once it entered (its entry fence passed: its earlier operations are over).
        if (j == 0 && !waitForPush(a, q, 1, kFenceStep)) return;
        if (free_after != 0 && !waitForPush(a, q, free_after, a.ready_wait_step)) return;
        if (p.hi > p.lo) {
          // What q gets: a reduce-scatter's block q of my input, else my own term or block.
          const unsigned char* pushed = C == PushedCollective::kReduceScatter ? sendBlockOf<T>(a, q) : own;
          copyFromSend<T>(a, reinterpret_cast<T*>(pushedPlace<T>(a, ring, p, j, r, q)),
                          reinterpret_cast<const T*>(pushed + (p.begin + p.lo) * sizeof(T)), p.hi - p.lo);
        }
      }
      // The local copy while the stores cross the links.
      if (!kReduces) copyOwnPiece<T>(a, own_output, own, p);
    }
    if (receives && j > 0) {
      // Every sending peer's piece j - 1 (its signal number 1 + j: entered came first).
      const BlockSlice p = pieceOf(s, ring.per_piece, j - 1);
      for (int k = 1; k < n; ++k) {
        const int q = (r + k) % n;
        if (broadcast && q != a.root) continue;
        if (!waitForPush(a, q, 1 + j, a.ready_wait_step)) return;
        if (!kReduces && p.hi > p.lo) {
          unsigned char* output = recvBlockOf<T>(a, C == PushedCollective::kAllGather ? q : 0);
          copySlice(output + (p.begin + p.lo) * sizeof(T), pushedPlace<T>(a, ring, p, j - 1, q, r),
                    (p.hi - p.lo) * sizeof(T));
        }
      }
      if (kReduces) foldPushedPiece<T, Op>(a, ring, p, j - 1, own, own_output);
      if (acknowledges) signalEveryPeer(a, kPushFlag);  // taken: fenced, so my reads of the place come first
    }
    if (sends && j < ring.pieces) signalEveryPeer(a, kPushFlag);  // ready: piece j (fenced: its stores first)
  }
  // This block's bases, one per peer (its thread): only it reads and writes them, so no other block need finish.
  __syncthreads();
  const int q = static_cast<int>(threadIdx.x);
  if (q < n && q != r) {
    const bool peer_sends = !broadcast || q == a.root;
    const std::uint64_t from_peer = 1 + (peer_sends || acknowledged ? ring.pieces : 0);
    a.control->base[counterIndex(q, kPushFlag, static_cast<int>(blockIdx.x))] += from_peer;
  }
}

// Broadcast past two ranks, relayed: the root pushes each receiver its range of the buffer (receiver i, in rank
// order among the root's peers, gets range i: relayRangeElements), piece by piece into the root's part of the
// receiver's ring; each receiver copies a piece of its range into its output and stores it into every other
// receiver's part for it, then takes every other receiver's piece of theirs. The root's links carry the
// buffer once (a root storing all of it into every peer carries it n - 1 times), every receiver's once in and
// (n - 2) / (n - 1) of it out. Signals on kPushFlag from every rank to every other: entered, then one per
// piece (the root's "piece j of your range is in place", a receiver's "I passed piece j on"), so every base
// advances by 1 + pieces. Reuse (kernels/piece_ring.h): the root's place at a receiver is free once that
// receiver passed the piece on (its signal for it, an acknowledgement's number); a receiver's place at another
// is free once that one signalled the piece after (it takes the others' pieces after its own signal). Always
// streamed (the plan's one slot holds one sender's block); the host chooses it past two ranks only.
template <typename T>
__device__ BlockSlice relaySliceOf(const LaunchArgs& a, int range_index, std::uint64_t range, std::uint64_t per_block) {
  BlockSlice s;
  s.begin = min(static_cast<std::uint64_t>(range_index) * range, a.count);
  const std::uint64_t size = min(s.begin + range, a.count) - s.begin;
  s.lo = min(static_cast<std::uint64_t>(blockIdx.x) * per_block, size);
  s.hi = min(s.lo + per_block, size);
  return s;
}

template <typename T>
__global__ void __launch_bounds__(kPlanKernelThreads) pushBroadcastRelayKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const int n = a.world_size;
  const int r = a.rank;
  const int root = a.root;
  signalEveryPeer(a, kPushFlag);  // entered
  const std::uint64_t range = relayRangeElements(a.count, sizeof(T), n);
  const std::uint64_t per_block = relayBlockElements(range, sizeof(T), gridDim.x);
  const PieceRing ring = streamedPieceRing(per_block, sizeof(T), senderPartBytes(a.ring_bytes, n), a.push_piece_bytes,
                                           gridDim.x, blockIdx.x);
  const unsigned char* input = inputOf(a);
  unsigned char* output = outputOf(a);
  for (std::uint64_t j = 0; j < ring.pieces; ++j) {
    if (r == root) {
      const std::uint64_t free_after = placeFreeSignal(ring, j, true);  // the receiver passed that piece on
      for (int k = 1; k < n; ++k) {
        const int q = (r + k) % n;
        if (j == 0 && !waitForPush(a, q, 1, kFenceStep)) return;
        if (free_after != 0 && !waitForPush(a, q, free_after, a.ready_wait_step)) return;
        const BlockSlice p = pieceOf(relaySliceOf<T>(a, senderPart(q, root), range, per_block), ring.per_piece, j);
        if (p.hi > p.lo) {
          copyFromSend<T>(a, reinterpret_cast<T*>(pushedPlace<T>(a, ring, p, j, r, q)),
                          reinterpret_cast<const T*>(input + (p.begin + p.lo) * sizeof(T)), p.hi - p.lo);
        }
        copyOwnPiece<T>(a, output, input, p);  // the root's own output, while the stores cross the links
      }
      signalEveryPeer(a, kPushFlag);  // piece j of every range is in place (fenced: the stores first)
      continue;
    }
    // A receiver: the root's piece j of my range (its signal 2 + j: entered came first).
    if (!waitForPush(a, root, 2 + j, a.ready_wait_step)) return;
    const BlockSlice mine = pieceOf(relaySliceOf<T>(a, senderPart(r, root), range, per_block), ring.per_piece, j);
    const unsigned char* from_root = pushedPlace<T>(a, ring, mine, j, root, r);
    // That receiver signalled the piece after (implied by my taking its piece j - 1 after its signal for it,
    // tests/kernels/piece_ring_test.cc; kept as a guard: the counter already holds it).
    const std::uint64_t free_after = placeFreeSignal(ring, j, false);
    for (int k = 1; k < n; ++k) {
      const int q = (r + k) % n;
      if (q == root) continue;
      if (j == 0 && !waitForPush(a, q, 1, kFenceStep)) return;
      if (free_after != 0 && !waitForPush(a, q, free_after, a.ready_wait_step)) return;
      if (mine.hi > mine.lo)
        copySlice(pushedPlace<T>(a, ring, mine, j, r, q), from_root, (mine.hi - mine.lo) * sizeof(T));
    }
    if (mine.hi > mine.lo)
      copySlice(output + (mine.begin + mine.lo) * sizeof(T), from_root, (mine.hi - mine.lo) * sizeof(T));
    signalEveryPeer(a, kPushFlag);  // passed on: fenced, so my stores and my reads of the root's place come first
    for (int k = 1; k < n; ++k) {
      const int q = (r + k) % n;
      if (q == root) continue;
      if (!waitForPush(a, q, 2 + j, a.ready_wait_step)) return;
      const BlockSlice theirs = pieceOf(relaySliceOf<T>(a, senderPart(q, root), range, per_block), ring.per_piece, j);
      if (theirs.hi > theirs.lo) {
        copySlice(output + (theirs.begin + theirs.lo) * sizeof(T), pushedPlace<T>(a, ring, theirs, j, q, r),
                  (theirs.hi - theirs.lo) * sizeof(T));
      }
    }
  }
  // This block's bases, one per peer (its thread): every peer sent entered and one signal per piece.
  __syncthreads();
  const int q = static_cast<int>(threadIdx.x);
  if (q < n && q != r) a.control->base[counterIndex(q, kPushFlag, static_cast<int>(blockIdx.x))] += 1 + ring.pieces;
}

template <typename T, typename Op>
hipError_t launchPushShape(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  const bool two_ranks = args.world_size == 2;  // the one-shot's and broadcast's slot and peer
  const bool ranks = args.world_size >= 2;      // reduce-scatter and all-gather: a ring part per sender
  switch (args.fused) {
    case kPushOneShot:
      if (!two_ranks) return hipErrorInvalidValue;
      return launchKernel(pushPiecesKernel<T, Op, PushedCollective::kAllReduce>, blocks, kPlanKernelThreads, stream,
                          overlap, args);
    case kPushReduceScatter:
      if (!ranks) return hipErrorInvalidValue;
      return launchKernel(pushPiecesKernel<T, Op, PushedCollective::kReduceScatter>, blocks, kPlanKernelThreads, stream,
                          overlap, args);
    // The copying collectives compile once per type: their operator is always the sum (no arithmetic).
    case kPushAllGather:
      if (!ranks) return hipErrorInvalidValue;
      return launchKernel(pushPiecesKernel<T, kernels::Sum, PushedCollective::kAllGather>, blocks, kPlanKernelThreads,
                          stream, overlap, args);
    case kPushBroadcast:
      if (!ranks) return hipErrorInvalidValue;
      if (!two_ranks) {  // relayed (its ring set: the host streams it past two ranks)
        if (args.ring_bytes == 0) return hipErrorInvalidValue;
        return launchKernel(pushBroadcastRelayKernel<T>, blocks, kPlanKernelThreads, stream, overlap, args);
      }
      return launchKernel(pushPiecesKernel<T, kernels::Sum, PushedCollective::kBroadcast>, blocks, kPlanKernelThreads,
                          stream, overlap, args);
    default:
      break;
  }
  return launchKernel(pushTwoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
}

}  // namespace

template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  return kernels::visitReduceOp(args.op, hipErrorInvalidValue, [&](auto op) {
    return launchPushShape<T, typename decltype(op)::type>(args, blocks, stream);
  });
}

template <typename T>
hipError_t loadFor() {
  const hipError_t loaded = loadEveryOp([](auto op) {
    using Op = typename decltype(op)::type;
    return std::array{&pushTwoShotKernel<T, Op>, &pushPiecesKernel<T, Op, PushedCollective::kAllReduce>,
                      &pushPiecesKernel<T, Op, PushedCollective::kReduceScatter>};
  });
  if (loaded != hipSuccess) return loaded;
  for (const auto kernel :
       std::array{&pushPiecesKernel<T, kernels::Sum, PushedCollective::kAllGather>,
                  &pushPiecesKernel<T, kernels::Sum, PushedCollective::kBroadcast>, &pushBroadcastRelayKernel<T>}) {
    const hipError_t one = loadKernel(kernel);
    if (one != hipSuccess) return one;
  }
  return hipSuccess;
}

}  // namespace peerreduce::gpu::push
