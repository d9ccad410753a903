#include "faulty_world.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "rank_threads.h"

namespace peerreduce::testing {
namespace {

constexpr std::chrono::milliseconds kAgreementTimeout{30000};

}  // namespace

Config FaultyWorld::smallConfig() {
  Config c;
  c.memory.pool_bytes = std::size_t{2} << 20;
  c.scratch_bytes = std::size_t{256} << 10;
  return c;
}

StatusOr<std::unique_ptr<FaultyWorld>> FaultyWorld::prepare(const Topology& topology, const Config& config,
                                                            double wait_timeout_us) {
  auto w = std::unique_ptr<FaultyWorld>(new FaultyWorld());
  const int n = topology.worldSize();
  w->topology_ = topology;
  w->config_ = config;
  w->wait_timeout_us_ = wait_timeout_us;
  w->hooks_ = std::make_shared<sim::SimFaultHooks>();
  w->controller_ = std::make_shared<faults::FaultController>(n, w->hooks_);
  sim::SimOptions options;
  options.topology = topology;
  options.wait_timeout_us = wait_timeout_us;
  PR_ASSIGN_OR_RETURN(w->world_, sim::SimWorld::create(n, options));
  w->hooks_->bind(w->world_);
  for (int r = 0; r < n; ++r) {
    w->transports_.push_back(std::make_shared<faults::FaultyTransport>(w->world_->transport(r), w->controller_));
  }
  return w;
}

StatusOr<std::unique_ptr<FaultyWorld>> FaultyWorld::create(const Topology& topology, Config config,
                                                           double wait_timeout_us,
                                                           const std::vector<faults::Fault>& creation_faults) {
  PR_ASSIGN_OR_RETURN(auto w, prepare(topology, config, wait_timeout_us));
  for (const faults::Fault& f : creation_faults) PR_RETURN_IF_ERROR(w->controller_->inject(f));
  const int n = topology.worldSize();
  FaultyWorld* raw = w.get();
  PR_ASSIGN_OR_RETURN(w->cluster_, sim::SimCluster::createWith(w->world_, [&](int r) {
                        return Communicator::create(r, n, raw->world_->bootstrap(r),
                                                    raw->transports_[static_cast<std::size_t>(r)], config);
                      }));
  return w;
}

FaultyWorld::Outcome FaultyWorld::allreduce(const std::vector<std::vector<std::int32_t>>& inputs,
                                            const std::vector<faults::Fault>& mid_operation) {
  const int n = size();
  Outcome out;
  out.result = inputs;
  out.status.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    auto& buf = out.result[static_cast<std::size_t>(r)];
    out.status[static_cast<std::size_t>(r)] =
        comm(r).allreduce(buf.data(), buf.data(), buf.size(), DataType::kInt32, ReduceOp::kSum);
  }
  for (const faults::Fault& f : mid_operation) (void)controller_->inject(f);
  (void)world_->runUntilIdle();
  for (int r = 0; r < n; ++r) {
    Status& s = out.status[static_cast<std::size_t>(r)];
    if (s.isOk()) s = comm(r).asyncError();
  }
  return out;
}

std::vector<StatusOr<FailureDecision>> FaultyWorld::abortAndAgree() {
  const int n = size();
  for (int r = 0; r < n; ++r) comm(r).abort();
  controller_->healTransient();
  std::vector<StatusOr<FailureDecision>> decided(static_cast<std::size_t>(n), internalError("agreement not run"));
  sim::runOnRankThreads(n, [&](int r) {
    decided[static_cast<std::size_t>(r)] =
        agreeOnFailures(*world_->bootstrap(r), comm(r).topology(), comm(r).failureReport(), kAgreementTimeout);
  });
  return decided;
}

StatusOr<std::unique_ptr<FaultyWorld>> FaultyWorld::shrink(const std::vector<FailureDecision>& decisions) {
  for (const FailureDecision& d : decisions) {
    if (std::binary_search(d.survivors.begin(), d.survivors.end(), d.rank)) continue;
    auto refused = shrinkCommunicator(comm(d.rank), d, nullptr, nullptr);
    if (refused.isOk() || refused.status().code() != ErrorCode::kPeerLost) {
      return internalError("rank " + std::to_string(d.rank) +
                           " was declared failed but shrink did not say so: " + refused.status().toString());
    }
  }
  const FailureDecision* chosen = largestGroup(decisions);
  if (!chosen) return unavailableError("no survivors");
  PR_ASSIGN_OR_RETURN(ShrinkPlan plan, planShrink(topology_, *chosen));
  PR_ASSIGN_OR_RETURN(auto w, prepare(plan.topology, config_, wait_timeout_us_));
  FaultyWorld* raw = w.get();
  PR_ASSIGN_OR_RETURN(w->cluster_, sim::SimCluster::createWith(w->world_, [&](int i) {
                        const int old = plan.old_rank[static_cast<std::size_t>(i)];
                        return shrinkCommunicator(comm(old), decisions[static_cast<std::size_t>(old)],
                                                  raw->world_->bootstrap(i),
                                                  raw->transports_[static_cast<std::size_t>(i)]);
                      }));
  return w;
}

}  // namespace peerreduce::testing
