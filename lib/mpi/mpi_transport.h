// MpiTransport: a Transport whose ranks are processes of an MPI communicator, typically one per machine.
//
// It executes verified plans (peerreduce/plan.h) on host memory. Each rank's symmetric region (scratch)
// is host memory of its own process; a plan's read of a peer's scratch becomes a read request to that
// peer (a control message) answered with the bytes (a reply), and a plan's signal a control message
// that increments the peer's counter (mpi/mpi_wire.h). Copies and reductions run on the host through
// kernels/host_reduce.h in the plan's order, so every rank's result has the same bits, the simulator's
// and the GPUs'. User buffers in device memory are staged through pinned host memory
// (mpi/user_buffer_staging.h).
//
// Why two-sided messages and not MPI one-sided windows, although plans pull: Open MPI 4.1 creates no
// window at all under MPI_THREAD_MULTIPLE when only TCP connects the processes (osc/pt2pt refuses the
// thread level and osc/rdma needs an RDMA network), and without an asynchronous progress engine a
// passive-target read is served only when the target calls MPI anyway. Here the executor of every
// rank answers its peers' reads while it waits, which is when they need them: reads come only after
// the owner's signal, and a rank returns from synchronize only after every peer that reads its memory
// sent its done signal (the end fence), so no read is left unanswered.
//
// Execution: submit() queues; synchronize() runs the queue on the calling thread. Every wait (a flag,
// a reply, a fence) is bounded by the operation's timeout and the synchronize deadline and checks the
// abort word and the peers' notices. Errors are typed and name the machine: kTimeout naming the machine
// that stopped answering (ranks near their deadline tell the others which machine they wait for, so a
// rank waiting on a neighbour that itself waits names the machine at the end of the chain), kPeerLost
// when a peer's transport was aborted or failed (it tells every peer before it stops), kAborted after
// abort(), kCorrupt for a malformed message, kUnavailable for an MPI call that failed. The first error
// is sticky.
//
// Plans: pull plans only (a rank writes only its own buffers; every shipped plan is one); a plan that
// writes a peer's memory is kUnsupported at preparePlan. No optional capability (time marks, buffer
// sharing, batches).
//
// Thread safety: as Transport: one thread drives a transport at a time (abort and peerHealth from any
// thread); the transports of one process may run on different threads, each on its own communicator,
// which needs MPI_THREAD_MULTIPLE (createMpiTransports checks).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "mpi/mpi_channel.h"
#include "mpi/user_buffer_staging.h"
#include "peerreduce/transport.h"
#include "plan/flag_epochs.h"
#include "topology/machines.h"

namespace peerreduce::mpi {

struct MpiTransportOptions {
  // Limit of the pinned host pool that stages device buffers (PEERREDUCE_PINNED_LIMIT_BYTES).
  std::size_t pinned_limit_bytes = kDefaultPinnedLimitBytes;
  // The last part of a wait's time during which this rank tells the others which machine it waits for
  // (at most half the wait's time). It must cover the difference between the ranks' start times of a
  // wait, so that every rank learns of the others' suspicions before its own deadline.
  std::chrono::milliseconds suspicion_window{500};
  // The link between every two ranks, for the cost model (topology/machines.h: the NIC's latency and
  // bandwidth; the default is a 400 Gb/s NIC).
  LinkInfo network = networkLink();
  // In messages: what one rank of this transport is ("machine").
  std::string rank_noun = "machine";
};

class MpiTransport final : public Transport {
 public:
  // Takes ownership of `comm`, which must be a communicator of its own (createMpiTransports makes one per
  // transport) with MPI_ERRORS_RETURN set.
  MpiTransport(MPI_Comm comm, MpiTransportOptions options);
  ~MpiTransport() override;

  TransportIdentity identity() const override;
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override;
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override;
  Topology topology() const override;
  Status preparePlan(const std::shared_ptr<const Plan>& plan) override;
  Status submit(const ExecutionRequest& request, StreamHandle stream) override;
  Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) override;
  Status asyncError() const override;
  void abort() override;
  PeerHealth peerHealth(int peer) const override;
  TransportCapabilities capabilities() override { return {}; }

  // The communicator the transport's messages travel on (for exchanging the region records over MPI).
  MPI_Comm comm() const { return channel_.comm(); }

  // Fault injection (tests, scenarios): from now on the link to `peer` is down, as in a network
  // partition: nothing this rank sends reaches `peer` and what `peer` sends is dropped on arrival. Safe
  // from any thread.
  void injectLinkDown(int peer);

 private:
  struct Operation {
    ExecutionRequest request;
    StreamHandle stream = nullptr;
    std::uint64_t seq = 0;
  };
  // Where the running operation's buffers are, as the host reaches them.
  struct Running {
    const Operation* op = nullptr;
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t slot_bytes = 0;
    std::chrono::steady_clock::time_point sync_deadline;
  };
  enum Health : int { kHealthUnknown = 0, kHealthAlive = 1, kHealthLost = 2 };

  std::string who() const;
  std::string machine(int peer) const;
  Status checkPlan(const Plan& plan) const;
  Status execute(const Operation& op, std::chrono::steady_clock::time_point sync_deadline);
  Status executeData(const Step& step, int index);
  std::byte* resolveLocal(const BufferRef& ref, int chunk) const;
  std::uint64_t& counter(int writer, int flag) {
    return counters_[static_cast<std::size_t>(writer) * kMaxFlags + static_cast<std::size_t>(flag)];
  }
  // Waits until ready() holds, answering peers meanwhile; awaited() names the machine it waits for,
  // what() describes the wait for the timeout message.
  Status waitUntil(const std::function<StatusOr<bool>()>& ready, const std::function<int()>& awaited,
                   const std::function<std::string()>& what);
  Status handleMessage(int source, const ControlMessage& message, std::size_t received_bytes);
  Status poll();
  // Whom a wait on `awaited` really waits for: follows the suspicions peers sent (a peer that suspects
  // another is alive and waiting itself) to the first machine that sent none; or, when two machines
  // suspect each other, the link between them.
  struct Culprit {
    int machine = -1;
    int link_to = -1;  // >= 0: the link machine <-> link_to
  };
  Culprit culpritFrom(int awaited) const;
  bool severed(int peer) const;
  Status sendControl(int peer, const ControlMessage& message);
  void notifyPeers(ControlKind kind, int peer);
  Status fail(Status status, bool tell_peers);

  MpiChannel channel_;
  MpiTransportOptions options_;
  int rank_;
  int world_size_;
  std::unique_ptr<std::byte[]> region_;
  std::size_t region_bytes_ = 0;
  bool connected_ = false;
  FlagEpochs epochs_;
  std::vector<std::uint64_t> counters_;  // signals received, per (writer, flag)
  std::vector<int> suspects_;            // per peer: the machine it said it waits for, -1 none
  std::deque<Operation> queue_;
  std::uint64_t next_seq_ = 0;
  std::vector<std::shared_ptr<const Plan>> prepared_;  // checked by preparePlan
  Running running_;
  std::vector<std::vector<std::byte>> fetched_;    // one buffer per source of a data step
  std::vector<MpiChannel::PendingReply> replies_;  // the reads of the current data step
  std::vector<const void*> sources_;
  std::vector<std::uint8_t> from_send_;
  UserBufferStaging staging_;
  std::atomic<bool> aborted_{false};
  bool told_peers_ = false;
  std::unique_ptr<std::atomic<int>[]> health_;
  std::unique_ptr<std::atomic<bool>[]> severed_;  // injectLinkDown
  mutable std::mutex error_mutex_;
  Status error_;
};

// The inter-machine transports of this process, `count` of them (one per local rank), each on its own
// duplicate of `machines` with MPI_ERRORS_RETURN. Collective over `machines`: every process calls it
// with the same count, from one thread. kUnsupported when MPI's thread level is too low for `count`
// transports on their own threads (mpi/mpi_environment.h), kInvalidArgument for a count below 1 or a
// communicator of more than kMaxWorldSize processes.
StatusOr<std::vector<std::shared_ptr<MpiTransport>>> createMpiTransports(MPI_Comm machines, int count,
                                                                         const MpiTransportOptions& options = {});

// Opens `transport`'s region of `region_bytes`, exchanges the records with its peers over its own
// communicator (bounded by `timeout`) and connects them. Collective over the transport's machines.
Status connectOverMpi(MpiTransport& transport, std::size_t region_bytes, std::chrono::milliseconds timeout);

}  // namespace peerreduce::mpi
