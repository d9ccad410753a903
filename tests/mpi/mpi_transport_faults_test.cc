// Machines lost and links down between machines, over MpiTransport: every machine's operation ends with
// a typed error naming the machine (or the link) within the deadline, on every local rank at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <thread>

#include "algorithms/algorithms.h"
#include "machine_world.h"

namespace peerreduce::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kMpiTransportFaultsTimeout = std::chrono::milliseconds(1500);
// What a failing operation may take beyond its deadline: the fence after the wait, the thread's wake-up.
constexpr auto kMpiTransportFaultsSlack = std::chrono::milliseconds(1000);
constexpr std::size_t kFaultCount = 4096;

mpi::MpiTransportOptions faultOptions() {
  mpi::MpiTransportOptions options;
  options.suspicion_window = std::chrono::milliseconds(500);
  return options;
}

struct Outcome {
  Status status;
  Clock::duration took{};
};

// Submits one float allreduce of `plan` on local rank l's transport and synchronizes, timing it.
Outcome runAllreduce(mpi::MpiTransport& transport, const std::shared_ptr<const Plan>& plan) {
  const std::vector<float> in(kFaultCount, 1.0f);
  std::vector<float> out(kFaultCount, 0.0f);
  const ExecutionRequest request = floatAllreduceRequest(plan, in, out, kMpiTransportFaultsTimeout);
  const auto start = Clock::now();
  Outcome outcome;
  outcome.status = transport.submit(request, nullptr);
  if (outcome.status.isOk()) outcome.status = transport.synchronize(nullptr, kMpiTransportFaultsTimeout * 4);
  outcome.took = Clock::now() - start;
  return outcome;
}

std::shared_ptr<const Plan> allreducePlan(Algorithm algorithm, int machines) {
  auto plan = buildPlan(PlanRequest(algorithm, machines));
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::make_shared<const Plan>(std::move(*plan));
}

// A fresh world of machines runs one allreduce of `algorithm` on every local rank at once; before(l,
// transport) injects the scenario's fault and says whether this rank takes part (false: it stays silent
// for longer than the deadline). The outcomes of the ranks that took part, by local rank.
struct Scenario {
  MachineWorld world;
  std::vector<Outcome> outcomes;
};
Scenario runScenario(Algorithm algorithm, const std::function<bool(mpi::MpiTransport&)>& before) {
  Scenario scenario;
  auto made = makeMachineWorld(kLocalRanks, faultOptions());
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk()) std::abort();  // the other machines would wait for this one's collectives
  scenario.world = std::move(*made);
  const auto plan = allreducePlan(algorithm, scenario.world.machines);
  scenario.outcomes.resize(kLocalRanks);
  onLocalRanks(kLocalRanks, [&](int l) {
    auto& transport = *scenario.world.transports[static_cast<std::size_t>(l)];
    if (before(transport)) {
      scenario.outcomes[static_cast<std::size_t>(l)] = runAllreduce(transport, plan);
    } else {
      std::this_thread::sleep_for(kMpiTransportFaultsTimeout + kMpiTransportFaultsSlack);
    }
    return Status::ok();
  });
  return scenario;
}

std::string named(int machine) { return "machine " + std::to_string(machine) + " "; }

TEST(MpiTransportFaults, AnAbortedMachineIsNamedAsLostByEveryOtherMachineAtOnce) {
  const int victim = machineCount() - 1;
  Scenario scenario = runScenario(Algorithm::kRing, [&](mpi::MpiTransport& transport) {
    if (transport.rank() == victim) transport.abort();
    return true;
  });
  const MachineWorld& world = scenario.world;
  const std::vector<Outcome>& outcomes = scenario.outcomes;
  bool ok = true;
  for (int l = 0; l < kLocalRanks; ++l) {
    const Outcome& outcome = outcomes[static_cast<std::size_t>(l)];
    const std::string message = outcome.status.toString();
    auto& transport = *world.transports[static_cast<std::size_t>(l)];
    if (world.machine == victim) {
      EXPECT_EQ(outcome.status.code(), ErrorCode::kAborted) << message;
      EXPECT_EQ(transport.peerHealth(victim), PeerHealth::kLost);
      ok = ok && outcome.status.code() == ErrorCode::kAborted;
      continue;
    }
    // Told by the victim itself: long before the deadline.
    EXPECT_EQ(outcome.status.code(), ErrorCode::kPeerLost) << message;
    EXPECT_NE(message.find(named(victim)), std::string::npos) << message;
    EXPECT_LT(outcome.took, kMpiTransportFaultsTimeout) << message;
    EXPECT_EQ(transport.peerHealth(victim), PeerHealth::kLost);
    EXPECT_EQ(transport.peerHealth(world.machine), PeerHealth::kAlive);
    ok = ok && outcome.status.code() == ErrorCode::kPeerLost && outcome.took < kMpiTransportFaultsTimeout;
  }
  EXPECT_TRUE(everyMachine(ok));
}

TEST(MpiTransportFaults, AMachineThatNeverAnswersIsNamedByEveryOtherMachineWithinTheDeadline) {
  const int victim = machineCount() - 1;
  // A ring: most machines wait for a neighbour that waits too, so naming the silent machine needs the
  // others' suspicions.
  Scenario scenario =
      runScenario(Algorithm::kRing, [&](mpi::MpiTransport& transport) { return transport.rank() != victim; });
  const MachineWorld& world = scenario.world;
  const std::vector<Outcome>& outcomes = scenario.outcomes;
  bool ok = true;
  if (world.machine != victim) {
    for (int l = 0; l < kLocalRanks; ++l) {
      const Outcome& outcome = outcomes[static_cast<std::size_t>(l)];
      const std::string message = outcome.status.toString();
      EXPECT_EQ(outcome.status.code(), ErrorCode::kTimeout) << message;
      EXPECT_NE(message.find(named(victim) + "did not answer"), std::string::npos) << message;
      EXPECT_LE(outcome.took, kMpiTransportFaultsTimeout + kMpiTransportFaultsSlack) << message;
      EXPECT_EQ(world.transports[static_cast<std::size_t>(l)]->peerHealth(victim), PeerHealth::kLost);
      ok = ok && outcome.status.code() == ErrorCode::kTimeout &&
           message.find(named(victim) + "did not answer") != std::string::npos &&
           outcome.took <= kMpiTransportFaultsTimeout + kMpiTransportFaultsSlack;
    }
  }
  EXPECT_TRUE(everyMachine(ok));
}

TEST(MpiTransportFaults, ALinkDownBetweenTwoMachinesIsATypedErrorOnEveryMachineWithinTheDeadline) {
  // One-shot: every machine reads every other's scratch, so the machines off the link finish their reads
  // and then wait for the endpoints, which wait for each other.
  Scenario scenario = runScenario(Algorithm::kOneShot, [](mpi::MpiTransport& transport) {
    if (transport.rank() <= 1) transport.injectLinkDown(1 - transport.rank());
    return true;
  });
  const MachineWorld& world = scenario.world;
  const std::vector<Outcome>& outcomes = scenario.outcomes;
  bool ok = true;
  for (int l = 0; l < kLocalRanks; ++l) {
    const Outcome& outcome = outcomes[static_cast<std::size_t>(l)];
    const std::string message = outcome.status.toString();
    EXPECT_LE(outcome.took, kMpiTransportFaultsTimeout + kMpiTransportFaultsSlack) << message;
    ok = ok && outcome.took <= kMpiTransportFaultsTimeout + kMpiTransportFaultsSlack;
    if (world.machine <= 1) {
      // An endpoint hears nothing from the other end: it names it.
      const int other = 1 - world.machine;
      EXPECT_EQ(outcome.status.code(), ErrorCode::kTimeout) << message;
      EXPECT_NE(message.find(named(other) + "did not answer"), std::string::npos) << message;
      ok = ok && outcome.status.code() == ErrorCode::kTimeout;
    } else {
      // A machine off the link heard both endpoints wait for each other: it names the link.
      EXPECT_EQ(outcome.status.code(), ErrorCode::kLinkDown) << message;
      EXPECT_NE(message.find("the link between machine 0 and machine 1"), std::string::npos) << message;
      ok = ok && outcome.status.code() == ErrorCode::kLinkDown;
    }
  }
  EXPECT_TRUE(everyMachine(ok));
}

}  // namespace
}  // namespace peerreduce::testing
