// Transport: what executes plans. The simulator and the GPUs implement it; a fault injector wraps it.
//
// A Transport serves one rank of one world. The Communicator drives it:
//   1. openSymmetric(bytes) at creation: this rank's symmetric region; returns a record describing
//      it that the Communicator sends to every peer through the Bootstrap;
//   2. connectPeers(records): maps every peer's region (IPC handles on GPUs);
//   3. submit(request, stream) per operation: enqueue this rank's program of the plan on `stream`;
//      it returns once enqueued (like a kernel launch), not when the data is reduced;
//   4. synchronize(stream, timeout): wait, bounded, until everything submitted on the stream is done,
//      and report any error it ended with.
// Optional hooks (defaults: kUnsupported / null), used outside the allreduce path:
//   - user-buffer registration: allocationOf, exportBuffer, releaseBuffer on the owner;
//     openPeerBuffer on every peer (GPU IPC shares whole allocations, so a record names an allocation
//     and peers add the buffer's offset inside it);
//   - localRegion: this rank's symmetric region, where the host can address it (the simulator).
// TransportWrapper forwards everything to another Transport, so a decorator (the fault injector)
// overrides only what it needs.
//
// Thread safety: one thread drives a given Transport at a time; distinct Transports of the same
// world may be driven from different threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce {

// A GPU stream (hipStream_t / cudaStream_t) or, on the simulator, any value (ignored: one queue per rank).
using StreamHandle = void*;

// Streams one communicator may use. Each stream gets its own signal area on the GPU and its own
// scratch, so operations on different streams may run at the same time; streams are numbered by first
// use, so every rank must use its streams in the same order (as it issues operations in the same order).
inline constexpr int kMaxStreams = 4;

struct ExecutionRequest {
  std::shared_ptr<const Plan> plan;  // kept alive by the transport until the operation completes
  const void* send = nullptr;        // this rank's input (count elements)
  void* recv = nullptr;              // this rank's output (== send when in place)
  std::size_t count = 0;             // elements in this operation (one segment of a user call)
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  ChunkLayout layout;              // how `count` splits into the plan's chunks
  std::size_t scratch_offset = 0;  // where this operation's scratch starts in every rank's region
  int stream_slot = 0;             // the stream's number on this communicator (0..kMaxStreams-1)
  // Bound on every wait of this operation (real time on GPUs; the simulator uses its virtual clock).
  std::chrono::milliseconds timeout{30000};
  // A batch (only with a one-shot or two-shot plan, and at most the transport's maxBatchBytes for that
  // algorithm): the operation reduces these buffers instead of send/recv (both null); `count` is the
  // sum of their counts and `layout` splits that sum. Valid only during submit: a transport copies
  // what it keeps.
  std::span<const BatchItem> batch;
};

// Most buffers one batched submit carries (the GPU passes their table as a kernel parameter).
inline constexpr std::size_t kMaxBatchItemsPerSubmit = 64;

// The allocation containing a buffer (what GPU IPC exports: cuMemGetAddressRange's answer).
struct BufferAllocation {
  const void* base = nullptr;
  std::size_t bytes = 0;
};

// A peer's registered buffer as this rank reaches it: a mapped device pointer on GPUs, the peer's host
// memory on the simulator. Writable: algorithms may deliver results into a peer's registered buffer.
struct PeerBufferView {
  int peer = -1;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
};

// What a transport's failure detector concludes about a peer, or about this rank itself (recovery:
// Communicator::failureReport). kUnknown where it has no evidence either way.
enum class PeerHealth { kAlive, kUnknown, kLost, kLinkDown };

class Transport {
 public:
  virtual ~Transport() = default;

  virtual std::string name() const = 0;
  // The device architecture tuning tables are keyed by ("simulator", "sm_90", "gfx90a", ...).
  virtual std::string architecture() const { return "unknown"; }
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;

  virtual StatusOr<std::vector<std::byte>> openSymmetric(std::size_t bytes) = 0;
  virtual Status connectPeers(const std::vector<std::vector<std::byte>>& records) = 0;
  // Links as this transport sees them (after connectPeers: what was actually reachable).
  virtual Topology topology() const = 0;

  // Called at communicator creation for every plan the communicator may submit, so that the transport
  // can stage it (the GPU copies it to device memory) before the allreduce path needs it.
  virtual Status preparePlan(const std::shared_ptr<const Plan>& /*plan*/) { return Status::ok(); }

  virtual Status submit(const ExecutionRequest& request, StreamHandle stream) = 0;
  // The largest batch one submit with a plan of `algorithm` (one-shot or two-shot) may carry, in bytes
  // with every buffer rounded up to 16 (the GPU's vector); 0 when it takes no such batches. The same
  // on every rank given the same settings, so every rank groups a batch the same way.
  virtual std::size_t maxBatchBytes(Algorithm /*algorithm*/) const { return 0; }
  virtual Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) = 0;
  // The first error an asynchronous operation ended with, or ok. Does not block.
  virtual Status asyncError() const = 0;
  // Makes every wait of this rank return promptly with kAborted. Safe from any thread.
  virtual void abort() = 0;
  // The failure detector's view of `peer` (this rank's own when peer == rank(): kLost when this rank
  // itself stopped working). Does not block. Peers outside the world are kUnknown.
  virtual PeerHealth peerHealth(int /*peer*/) const { return PeerHealth::kUnknown; }

  // Time marks, for the profiler (optional). reserveTimeMarks makes marks 0..count-1 (called once, off
  // the allreduce path). markTime(m, stream) sets mark m, in order with the work enqueued on `stream`:
  // it is reached when everything enqueued before it has finished. Returns false when the stream
  // cannot be timed now (a GPU stream being captured into a graph). markedSpanUs(from, to): the
  // microseconds between two reached marks (real time on GPUs, virtual time on the simulator), or
  // nullopt while either is pending (or its work failed). Re-marking a mark replaces it.
  virtual Status reserveTimeMarks(std::size_t /*count*/) {
    return unsupportedError(name() + " cannot time operations (no time marks)");
  }
  virtual StatusOr<bool> markTime(std::size_t /*mark*/, StreamHandle /*stream*/) {
    return unsupportedError(name() + " cannot time operations (no time marks)");
  }
  virtual StatusOr<std::optional<double>> markedSpanUs(std::size_t /*from*/, std::size_t /*to*/) {
    return unsupportedError(name() + " cannot time operations (no time marks)");
  }

  // This rank's symmetric region as the host can address it, or null where it cannot (device memory).
  // Valid from openSymmetric until the transport is destroyed.
  virtual std::byte* localRegion() { return nullptr; }

  // User-buffer registration (optional). allocationOf: the allocation containing [ptr, ptr + bytes).
  virtual StatusOr<BufferAllocation> allocationOf(const void* /*ptr*/, std::size_t /*bytes*/) {
    return unsupportedError(name() + " cannot register user buffers (no allocationOf)");
  }
  // A record (at most kMaxPeerRecordBytes) from which peers open the allocation [base, base + bytes).
  virtual StatusOr<std::vector<std::byte>> exportBuffer(const void* /*base*/, std::size_t /*bytes*/) {
    return unsupportedError(name() + " cannot export user buffers to peers");
  }
  // Ends an export made by exportBuffer; records of it no longer open.
  virtual void releaseBuffer(const void* /*base*/, std::size_t /*bytes*/) {}
  // Opens [offset, offset + bytes) of the allocation `peer` exported as `record`. A record that is not a
  // live export of `peer` in this world is kCorrupt; a range outside the exported allocation or a peer
  // outside the world is kInvalidArgument; each names what was wrong.
  virtual StatusOr<PeerBufferView> openPeerBuffer(int /*peer*/, const std::vector<std::byte>& /*record*/,
                                                  std::size_t /*offset*/, std::size_t /*bytes*/) {
    return unsupportedError(name() + " cannot open peers' user buffers");
  }
};

class TransportWrapper : public Transport {
 public:
  explicit TransportWrapper(std::shared_ptr<Transport> target) : target_(std::move(target)) {}

  std::string name() const override { return target_->name(); }
  std::string architecture() const override { return target_->architecture(); }
  int rank() const override { return target_->rank(); }
  int worldSize() const override { return target_->worldSize(); }
  StatusOr<std::vector<std::byte>> openSymmetric(std::size_t bytes) override { return target_->openSymmetric(bytes); }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    return target_->connectPeers(records);
  }
  Topology topology() const override { return target_->topology(); }
  Status preparePlan(const std::shared_ptr<const Plan>& plan) override { return target_->preparePlan(plan); }
  Status submit(const ExecutionRequest& request, StreamHandle stream) override {
    return target_->submit(request, stream);
  }
  std::size_t maxBatchBytes(Algorithm algorithm) const override { return target_->maxBatchBytes(algorithm); }
  Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) override {
    return target_->synchronize(stream, timeout);
  }
  Status asyncError() const override { return target_->asyncError(); }
  void abort() override { target_->abort(); }
  PeerHealth peerHealth(int peer) const override { return target_->peerHealth(peer); }
  std::byte* localRegion() override { return target_->localRegion(); }
  Status reserveTimeMarks(std::size_t count) override { return target_->reserveTimeMarks(count); }
  StatusOr<bool> markTime(std::size_t mark, StreamHandle stream) override { return target_->markTime(mark, stream); }
  StatusOr<std::optional<double>> markedSpanUs(std::size_t from, std::size_t to) override {
    return target_->markedSpanUs(from, to);
  }
  StatusOr<BufferAllocation> allocationOf(const void* ptr, std::size_t bytes) override {
    return target_->allocationOf(ptr, bytes);
  }
  StatusOr<std::vector<std::byte>> exportBuffer(const void* base, std::size_t bytes) override {
    return target_->exportBuffer(base, bytes);
  }
  void releaseBuffer(const void* base, std::size_t bytes) override { target_->releaseBuffer(base, bytes); }
  StatusOr<PeerBufferView> openPeerBuffer(int peer, const std::vector<std::byte>& record, std::size_t offset,
                                          std::size_t bytes) override {
    return target_->openPeerBuffer(peer, record, offset, bytes);
  }

 protected:
  Transport& target() { return *target_; }

 private:
  std::shared_ptr<Transport> target_;
};

}  // namespace peerreduce
