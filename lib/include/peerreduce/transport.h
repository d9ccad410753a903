// Transport: what executes plans. The simulator and the GPUs implement it; decorators (the fault
// injector) wrap it.
//
// A Transport serves one rank of one world. Its core is what every executor must do; the Communicator
// drives it:
//   1. openSymmetric(bytes) at creation: this rank's symmetric region; returns a record describing it,
//      which the Communicator sends to every peer through the Bootstrap;
//   2. connectPeers(records): maps every peer's region (IPC handles on GPUs); topology(): the links it
//      found;
//   3. preparePlan(plan) for every plan the communicator may run, then submit(request, stream) per
//      operation: enqueue this rank's program of the plan on `stream`; it returns once enqueued (like a
//      kernel launch), not when the data is reduced;
//   4. synchronize(stream, timeout): wait, bounded, until everything submitted on the stream is done,
//      and report any error it ended with; asyncError() without waiting; abort() from any thread;
//      peerHealth(peer): the failure detector's view, for recovery.
// Everything else is an optional capability (transport_capabilities.h), reached through capabilities():
// each is a pointer that is null when the transport lacks it, so a caller asks before it uses one and
// a decorator forwards the core and only the capabilities it wraps.
//
// Thread safety: one thread drives a given Transport at a time (abort excepted); distinct Transports of
// the same world may be driven from different threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "peerreduce/transport_capabilities.h"
#include "peerreduce/types.h"

namespace peerreduce {

// Channels of one communicator: signal areas on the GPU, each with its own scratch. Channel 0 carries
// every operation enqueued for immediate execution, on whatever stream; channels 1..kMaxChannels-1 the
// operations captured into graphs, one channel per capture in the order captures appear (round robin).
// A channel's operations run one after another in their order of call (the transport orders streams),
// so a program may use any number of streams, and ranks that number their streams differently agree
// (lib/api/channel_leases.h).
inline constexpr int kMaxChannels = 4;

struct ExecutionRequest {
  std::shared_ptr<const Plan> plan;  // kept alive by the transport until the operation completes
  const void* send = nullptr;        // this rank's input (count elements per block it holds)
  void* recv = nullptr;              // this rank's output (== send when in place)
  std::size_t count = 0;             // elements in this operation (one segment of a user call)
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  ChunkLayout layout;  // how `count` splits into the plan's chunks
  // Plans of several blocks (reduce-scatter, all-gather): elements from one block's start to the next
  // in the buffer that holds every block (the user's per-rank count, at least `count`); send and recv
  // point at this segment's part of block 0 (of the rank's own block in the buffer that holds one).
  std::size_t block_stride = 0;
  std::size_t scratch_offset = 0;  // where this operation's scratch starts in every rank's region
  // Streamed (StreamedSubmit, peerreduce/transport_capabilities.h): the bytes of scratch from scratch_offset
  // the operation cycles through (its `count` may be more than one execution of the plan fits there); 0: the
  // scratch `layout` asks for holds the whole operation.
  std::size_t ring_bytes = 0;
  int channel = 0;  // the signal area and scratch of this operation (0..kMaxChannels-1)
  // The graph capture `stream` is in (StreamCaptures::captureOf), 0 when none: the transport orders an
  // operation after the channel's previous one only within the same capture (or both eager).
  std::uint64_t capture = 0;
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

// What a transport's failure detector concludes about a peer, or about this rank itself (recovery:
// Communicator::failureReport). kUnknown where it has no evidence either way.
enum class PeerHealth { kAlive, kUnknown, kLost, kLinkDown };

// Who a transport is: for messages, tuning tables and the checks at creation.
struct TransportIdentity {
  std::string name;          // "simulator", "cuda gpu 3", "faulty(simulator)"
  std::string architecture;  // the key of tuning tables: "simulator", "sm_90", "gfx90a"; "unknown" if none
  int rank = 0;
  int world_size = 1;
  // The transport compares every rank's operations itself (the simulator's engine): the communicator's
  // own check through shared host memory (Config::check_operations) is not needed.
  bool compares_operations = false;
};

// What opening the symmetric region gave: the record peers need to map it, and where the host can
// address the region (the simulator's host memory), null where it cannot (device memory). The address
// stays valid until the transport is destroyed.
struct OpenedRegion {
  std::vector<std::byte> record;  // at most kMaxPeerRecordBytes
  std::byte* host_address = nullptr;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual TransportIdentity identity() const = 0;

  virtual StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) = 0;
  virtual Status connectPeers(const std::vector<std::vector<std::byte>>& records) = 0;
  // Links as this transport sees them (after connectPeers: what was actually reachable).
  virtual Topology topology() const = 0;

  // Called at communicator creation for every plan the communicator may submit, so that the transport
  // can stage it (the GPU copies it to device memory) before the allreduce path needs it.
  virtual Status preparePlan(const std::shared_ptr<const Plan>& plan) = 0;
  virtual Status submit(const ExecutionRequest& request, StreamHandle stream) = 0;
  virtual Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) = 0;
  // The first error an asynchronous operation ended with, or ok. Does not block.
  virtual Status asyncError() const = 0;
  // Makes every wait of this rank return promptly with kAborted. Safe from any thread.
  virtual void abort() = 0;
  // The failure detector's view of `peer` (this rank's own when peer == rank: kLost when this rank
  // itself stopped working). Does not block. Peers outside the world are kUnknown.
  virtual PeerHealth peerHealth(int peer) const = 0;

  // The optional capabilities this transport has (null members: absent). Valid as long as the transport.
  virtual TransportCapabilities capabilities() = 0;

  // Shorthands for identity()'s fields.
  std::string name() const { return identity().name; }
  int rank() const { return identity().rank; }
  int worldSize() const { return identity().world_size; }
};

// Forwards the core and every capability to another Transport, so a decorator overrides only what it
// changes (and replaces a capability by editing the struct capabilities() returns).
class TransportWrapper : public Transport {
 public:
  explicit TransportWrapper(std::shared_ptr<Transport> target) : target_(std::move(target)) {}

  TransportIdentity identity() const override { return target_->identity(); }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override { return target_->openSymmetric(bytes); }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    return target_->connectPeers(records);
  }
  Topology topology() const override { return target_->topology(); }
  Status preparePlan(const std::shared_ptr<const Plan>& plan) override { return target_->preparePlan(plan); }
  Status submit(const ExecutionRequest& request, StreamHandle stream) override {
    return target_->submit(request, stream);
  }
  Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) override {
    return target_->synchronize(stream, timeout);
  }
  Status asyncError() const override { return target_->asyncError(); }
  void abort() override { target_->abort(); }
  PeerHealth peerHealth(int peer) const override { return target_->peerHealth(peer); }
  TransportCapabilities capabilities() override { return target_->capabilities(); }

 protected:
  Transport& target() { return *target_; }
  const Transport& target() const { return *target_; }

 private:
  std::shared_ptr<Transport> target_;
};

}  // namespace peerreduce
