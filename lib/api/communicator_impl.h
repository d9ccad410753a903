// The state behind a Communicator (internal).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/buffer_registrations.h"
#include "api/channel_leases.h"
#include "api/operation_log.h"
#include "api/plan_choice.h"
#include "api/profiler.h"
#include "bootstrap/rank_agreement.h"
#include "memory/pinned_host_pool.h"
#include "memory/symmetric_pool.h"
#include "peerreduce/communicator.h"
#include "select/tuning_table.h"

namespace peerreduce {

struct Communicator::Impl {
  // Set by abort() from any thread; every later operation refuses with kAborted.
  std::atomic<bool> aborted{false};
  int rank = 0;
  int size = 1;
  Config config;
  std::shared_ptr<Bootstrap> bootstrap;
  std::shared_ptr<Transport> transport;
  // Where the host can address this rank's symmetric region (the simulator), null where it cannot.
  std::byte* region_host_address = nullptr;
  Topology topology;         // agreed by all ranks, link mask applied
  std::string architecture;  // rank 0's device architecture (tuning-table key)
  std::optional<TuningTable> tuning;
  // PEERREDUCE_PLAN_FILE's plan, checked at creation; attached to its collective's PlanChoice.
  std::shared_ptr<const UserPlan> user_plan;
  PlanChoice allreduce;  // the allreduce plans this communicator may run, and their selector
  // The other collectives' plans, built at their first call (communicator_collectives.cc); broadcast's
  // per root (sized to the world then).
  PlanChoice reduce_scatter;
  PlanChoice all_gather;
  std::vector<PlanChoice> broadcast;
  // The books of this rank's symmetric region (the transport owns the region). Every rank makes the
  // same pool calls in the same order, so blocks have the same offsets everywhere.
  std::optional<SymmetricPool> pool;
  // The channels (signal areas) used so far and their scratch leases from `pool` (declared after it:
  // ends first).
  std::optional<ChannelLeases> channels;
  // Every operation compared with the other ranks' of this machine before it is submitted
  // (api/operation_log.h); null where the check is off, the transport compares them itself, or the ranks
  // share no host memory.
  std::unique_ptr<OperationLog> operation_log;
  // Null unless enableProfiling was called: the allreduce path's only cost when off is this check.
  std::unique_ptr<Profiler> profiler;
  // Page-locked host memory for host-staged paths, bounded by Config::memory.pinned_limit_bytes.
  // Shared with the transport (LinkAdoption), which stages host-staged links' traffic through it.
  std::shared_ptr<PinnedHostPool> pinned;
  // Registered user buffers; declared last so they end before anything they could refer to.
  BufferRegistrations buffers;
};

// Ranks agree over the communicator's bootstrap, each collective bounded by the bootstrap timeout.
inline RankAgreement agreementOf(const Communicator::Impl& impl) {
  return RankAgreement(*impl.bootstrap, impl.config.bootstrapTimeout());
}

// The state behind a Communicator, for the library's internal entry points (api/strided_collectives.h).
struct CommunicatorAccess {
  static Communicator::Impl& impl(Communicator& comm) { return *comm.impl_; }
};

// Offers the plan file to `choice` where it is written for `collective` (and broadcast's `root`), its plans
// prepared on the transport (communicator_collectives.cc).
Status attachPlanFile(Communicator::Impl& impl, Collective collective, int root, PlanChoice& choice);

// Creates the pool for the region the transport opened and takes the scratch (communicator_memory.cc).
Status createPool(Communicator::Impl& impl);
// Where an operation enqueued on a stream runs: its channel (ChannelLeases::channelOf) and the graph
// capture the stream is in (0: none), which the transport needs to order the channel's operations.
struct OperationChannel {
  int channel = 0;
  std::uint64_t capture = 0;
};
// The channel of an operation enqueued on `stream` now (communicator_memory.cc).
StatusOr<OperationChannel> operationChannel(Communicator::Impl& impl, StreamHandle stream);
// The scratch of `channel` for one operation (ChannelLeases::lease).
inline StatusOr<PoolBlock> leaseScratch(Communicator::Impl& impl, int channel) { return impl.channels->lease(channel); }

}  // namespace peerreduce
