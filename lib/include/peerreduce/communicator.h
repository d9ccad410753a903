// Communicator: one rank's handle on a world of ranks that allreduce (reduce-scatter, all-gather,
// broadcast) together.
//
// Create one per rank, collectively: every rank calls create() with its own rank, the same size and
// the same configuration, a Bootstrap of the world and this rank's Transport. Then every rank calls
// allreduce() with the same count, dtype and op, in the same order.
//
// Contract:
// - allreduce() validates its arguments before touching anything: on a bad argument it returns
//   kInvalidArgument naming the problem, and no buffer and no state has changed.
// - It enqueues the work on `stream` and returns (like a kernel launch); synchronize(stream) waits,
//   bounded by the configured timeout, and returns the operation's error if it failed.
// - Every rank ends with the same bits; the same inputs give the same bits on every run.
// - The allreduce path allocates no heap memory: plans are made at creation; scratch is a block of the
//   symmetric pool (docs/MEMORY.md), taken at creation and kept. When the pool cannot give the
//   preferred Config::scratch_bytes (other blocks hold it), allreduce runs in more segments through
//   the scratch it can get, down to kMinScratchBytes; below that it returns kOutOfMemory on every
//   rank, and works again once memory is returned.
// - Memory calls marked "collective" change the symmetric pool: every rank makes them at the same
//   point of its sequence of allreduce and memory calls, so every rank's pool stays identical.
// - No exception escapes; errors are Status values.
//
// Thread safety: one thread at a time per Communicator; different Communicators (ranks) may be used
// from different threads concurrently.
//
// Example (simulated world of 4 ranks, one thread per rank):
//   auto world = peerreduce::sim::SimWorld::create(4, {}).value();
//   // on the thread of rank r:
//   auto comm = peerreduce::Communicator::create(r, 4, world->bootstrap(r), world->transport(r)).value();
//   PR_RETURN_IF_ERROR(comm->allreduce(send, recv, n, peerreduce::DataType::kFloat32, peerreduce::ReduceOp::kSum));
//   PR_RETURN_IF_ERROR(comm->synchronize());
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/config.h"
#include "peerreduce/memory.h"
#include "peerreduce/profiler.h"
#include "peerreduce/recovery.h"
#include "peerreduce/registered_buffer.h"
#include "peerreduce/selection.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "peerreduce/transport.h"
#include "peerreduce/types.h"

namespace peerreduce {

// Most items one allreduceBatch call takes (its grouping is planned on the stack, without allocating).
inline constexpr std::size_t kMaxBatchItems = 1024;

class Communicator {
 public:
  static StatusOr<std::unique_ptr<Communicator>> create(int rank, int size, std::shared_ptr<Bootstrap> bootstrap,
                                                        std::shared_ptr<Transport> transport,
                                                        const Config& config = Config{});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // Enqueues the allreduce on `stream`, any stream: the communicator's operations run in their order of
  // call, each after the previous one even when that was on another stream, and match across ranks by
  // that order (NCCL's rule), never by stream; operations captured into a graph use a signal area and
  // scratch of their own (peerreduce/transport.h, kMaxChannels). `op` reduces as types.h says
  // (avg: NCCL's average, a sum of inputs premultiplied by 1/size for floating types).
  Status allreduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                   StreamHandle stream = nullptr);
  // Enqueues an allreduce of every item (each reduced across ranks as if by its own allreduce(), with
  // the same dtype and op), in as few operations as possible: items are grouped in order into one-shot
  // or two-shot operations of up to kMaxBatchItemsPerSubmit items and the transport's maxBatchBytes (on
  // GPUs one kernel launch per group); an item too large for a group runs as an ordinary allreduce in
  // its place.
  // Every rank gives the same counts in the same order. Items of one group must not overlap each other
  // (kInvalidArgument naming both); every item is checked before anything is enqueued. At most
  // kMaxBatchItems items per call.
  Status allreduceBatch(std::span<const BatchItem> items, DataType dtype, ReduceOp op, StreamHandle stream = nullptr);

  // The other collectives, with NCCL's buffer semantics and the same contract as allreduce (validated
  // before anything is touched, enqueued on `stream`, the same bits on every run). Their plans (one-shot,
  // i.e. direct; ring; recursive halving / doubling for reduce-scatter and all-gather; trees: binomial,
  // or relays where not every pair is linked) are built, verified and prepared at a collective's first
  // call on the communicator (for broadcast, per root), the same on every rank. Each collective's own
  // Config field (reduce_scatter_algorithm, ...) forces its algorithm (kInvalidArgument at that call when
  // the topology cannot carry it); otherwise Config::algorithm applies where the collective has it.
  //
  // reduceScatter: `send` holds size x recvcount elements; block b (elements b x recvcount ..) of every
  // rank's send, reduced with `op` (avg: NCCL's average, as allreduce's; types.h), lands in rank b's `recv` (recvcount
  // elements). In place when recv == send + rank x recvcount.
  Status reduceScatter(const void* send, void* recv, std::size_t recvcount, DataType dtype, ReduceOp op,
                       StreamHandle stream = nullptr);
  // allGather: rank b's `send` (sendcount elements) lands in block b of every rank's `recv` (size x
  // sendcount elements). In place when send == recv + rank x sendcount.
  Status allGather(const void* send, void* recv, std::size_t sendcount, DataType dtype, StreamHandle stream = nullptr);
  // broadcast: the root's `send` (count elements) lands in every rank's `recv`. `send` is read on the
  // root only (other ranks may pass null); in place when send == recv. Every rank passes the same root.
  Status broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                   StreamHandle stream = nullptr);
  Status synchronize(StreamHandle stream = nullptr);
  // The first error an enqueued operation ended with, or ok. Does not block. Such an error is sticky,
  // as NCCL's asynchronous errors are: every later operation reports it, and the communicator must be
  // destroyed and created anew. Ranks that disagree on an operation (collective, count, dtype, op, root)
  // get kMismatch (the simulator's engine compares them; elsewhere ranks of one machine compare them
  // through shared host memory, Config::check_operations): the refusing rank at its call, a rank whose
  // operation was launched when its wait ends, both sticky.
  Status asyncError() const;
  // Ends every wait of this rank promptly (kAborted) and refuses every later allreduce, synchronize
  // and registration with kAborted, writing nothing. Safe from any thread, and safe when every rank
  // aborts at once. The communicator stays destroyable; make a new one to continue.
  void abort();
  bool aborted() const;
  // What this rank's failure detector saw (the transport's PeerHealth of every linked peer and of this
  // rank itself): the peers lost, this rank too when it failed, and the dead links at its end. The
  // input to agreeOnFailures (peerreduce/recovery.h). Does not block; valid after abort.
  FailureReport failureReport() const;

  int rank() const;
  int size() const;
  const Config& config() const;
  const Topology& topology() const;

  // What allreduce() chooses for `count` elements of `dtype` (deterministic, the same on every rank).
  StatusOr<SelectionReport> explainSelection(std::size_t count, DataType dtype) const;
  // What `collective` chooses for `count` elements per rank's block (reduceScatter's recvcount,
  // allGather's sendcount, broadcast's and allreduce's count) of `dtype`, broadcast from `root` (the
  // others ignore it, but it must be a rank). Builds
  // the collective's plans if no call did yet (as its first call would; local, nothing is exchanged).
  // `forced` says whether a setting forced the algorithm: the collective's own, or Config::algorithm where
  // the collective has it (otherwise the cost model chooses).
  StatusOr<SelectionReport> explainSelection(Collective collective, std::size_t count, DataType dtype, int root = 0);

  // This rank's symmetric pool: bytes in use, peak, allocations, failures, free blocks, largest free
  // block, fragmentation, compactions (the same on every rank).
  PoolStats memoryStats() const;
  // Collective. Compacts idle pool-internal scratch (docs/MEMORY.md says what moves and what cannot);
  // returns the number of blocks moved.
  std::size_t defragment();
  // Collective. A block of `bytes` of the symmetric pool for the application (kUserBuffer: never
  // moves). kOutOfMemory names what was asked, what is free, the largest free block and the setting to
  // raise; kInvalidArgument for 0 bytes. Work submitted before the call may still read its range:
  // synchronize before writing to it.
  StatusOr<SymmetricBlock> allocateSymmetric(std::size_t bytes);
  // Collective. Returns the communicator's scratch to the pool (to make room for application blocks);
  // the next allreduce takes scratch again, as much of the preferred size as it can get.
  void releaseScratch();
  // Bytes of scratch held now, over every stream (0 after releaseScratch or a failed allreduce).
  std::size_t scratchBytesHeld() const;

  // Profiling (peerreduce/profiler.h), off until enabled. enableProfiling keeps the most recent
  // `capacity` operations (1 .. kMaxProfileCapacity, else kInvalidArgument; kUnsupported where the
  // transport cannot time); calling it again starts afresh. Not collective.
  Status enableProfiling(std::size_t capacity = kDefaultProfileCapacity);
  void disableProfiling();
  bool profiling() const;
  // The records held, oldest first; operations still running are untimed until a later call.
  // kUnavailable when profiling is off.
  StatusOr<std::vector<OperationProfile>> profile();
  StatusOr<ProfileSummary> profileSummary();

  // This rank's pinned host pool (Config::memory.pinned_limit_bytes, PEERREDUCE_PINNED_LIMIT_BYTES):
  // bytes pinned, in use and idle, reuses, evictions, failures, and the traffic of host-staged links (on
  // GPUs a rank with a host-staged peer holds its region there: bytes_staged, staged_operations).
  PinnedStats pinnedStats() const;

  // Collective. Registers this rank's [ptr, ptr + bytes) with its peers (registered_buffer.h): the
  // allocation containing it is exported once (cached by its base), the records are exchanged through
  // the Bootstrap, and every rank opens its peers' buffers. If any rank fails, every rank returns an
  // error naming the first rank that failed, and no registration is left behind. kUnsupported where
  // the transport cannot export buffers.
  StatusOr<RegisteredBuffer> registerBuffer(const void* ptr, std::size_t bytes);
  // Collective. Ends a registration made by this communicator; every copy of the handle becomes
  // invalid. kInvalidArgument (on every rank, changing nothing) when any rank's handle is not a live
  // registration of its communicator.
  Status deregisterBuffer(const RegisteredBuffer& buffer);
  // The registration cache: allocations exported, registrations, cache hits, releases.
  RegistrationStats registrationStats() const;

  struct Impl;

 private:
  friend struct CommunicatorAccess;  // the library's internal entry points (api/communicator_impl.h)
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace peerreduce
