// The simulator's half of the C API across machines (peerreduce/peerreduce_sim.h, "Simulated machines"):
// prMultiSimWorld* and prMultiCommInitSim*. The calls on a communicator are lib/api/c_api_multi_machine.cc.
#include <memory>
#include <string>
#include <vector>

#include "api/c_api_internal.h"
#include "api/c_multi_comm_handle.h"
#include "c_api_sim_internal.h"
#include "peerreduce/multi_machine_sim.h"
#include "peerreduce/peerreduce_sim.h"
#include "rank_threads.h"

struct prMultiSimWorld {
  std::shared_ptr<peerreduce::sim::MultiMachineSimWorld> world;
};

namespace peerreduce::capi {
namespace {

HandleRegistry& liveMultiWorlds() {
  static HandleRegistry registry;
  return registry;
}

constexpr const char* kMultiWorldHint = "pass a world made by prMultiSimWorldCreate";

prResult_t checkMultiWorld(const char* function, prMultiSimWorld_t world) noexcept {
  if (world == nullptr) return nullArgument(function, "world", kMultiWorldHint);
  if (!liveMultiWorlds().contains(world)) return unknownHandle(function, "world", kMultiWorldHint);
  return prSuccess;
}

// One rank's communicator; never throws (it runs on a rank thread in prMultiCommInitSimAll).
Status createMultiSimComm(const std::shared_ptr<sim::MultiMachineSimWorld>& world, int rank, const Config& config,
                          std::unique_ptr<prMultiComm>& out) noexcept {
  return createRankGuarded(rank, [&]() -> Status {
    auto comm = MultiMachineCommunicator::create(rank, world->worldSize(), world->worldBootstrap(rank),
                                                 world->linksFactory(), config, world->hostIdentity(rank));
    if (!comm.isOk()) return comm.status();
    out = std::make_unique<prMultiComm>(prMultiComm{std::move(comm).value(), world});
    return Status::ok();
  });
}

}  // namespace
}  // namespace peerreduce::capi

using peerreduce::capi::checkMultiWorld;
using peerreduce::capi::guarded;
using peerreduce::capi::liveMultiComms;
using peerreduce::capi::liveMultiWorlds;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;

extern "C" {

prResult_t prMultiSimWorldCreate(int machines, int ranks_per_machine, uint64_t seed,
                                 prMultiSimWorld_t* world) noexcept {
  constexpr const char* kFunction = "prMultiSimWorldCreate";
  if (world != nullptr) *world = nullptr;
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) {
      return nullArgument(kFunction, "world", "pass the address of a prMultiSimWorld_t to receive it");
    }
    peerreduce::sim::MultiMachineSimOptions options;
    options.machines = machines;
    options.ranks_per_machine = ranks_per_machine;
    options.seed = seed;
    auto created = peerreduce::sim::MultiMachineSimWorld::create(options);
    if (!created.isOk()) return toResult(kFunction, created.status());
    auto made = std::make_unique<prMultiSimWorld>(prMultiSimWorld{std::move(created).value()});
    liveMultiWorlds().add(made.get());
    *world = made.release();
    return prSuccess;
  });
}

prResult_t prMultiSimWorldDestroy(prMultiSimWorld_t world) noexcept {
  constexpr const char* kFunction = "prMultiSimWorldDestroy";
  return guarded(kFunction, [&]() -> prResult_t {
    const prResult_t checked = checkMultiWorld(kFunction, world);
    if (checked != prSuccess) return checked;
    liveMultiWorlds().remove(world);
    delete world;
    return prSuccess;
  });
}

prResult_t prMultiCommInitSimRank(prMultiSimWorld_t world, int rank, const prConfig_t* config,
                                  prMultiComm_t* comm) noexcept {
  constexpr const char* kFunction = "prMultiCommInitSimRank";
  if (comm != nullptr) *comm = nullptr;
  return guarded(kFunction, [&]() -> prResult_t {
    const prResult_t checked = checkMultiWorld(kFunction, world);
    if (checked != prSuccess) return checked;
    if (comm == nullptr) return nullArgument(kFunction, "comm", "pass the address of a prMultiComm_t to receive it");
    const prResult_t in_world = peerreduce::capi::checkSimRank(kFunction, rank, world->world->worldSize());
    if (in_world != prSuccess) return in_world;
    auto settings = peerreduce::capi::toConfig(config);
    if (!settings.isOk()) return toResult(kFunction, settings.status());
    std::unique_ptr<prMultiComm> made;
    const peerreduce::Status status = peerreduce::capi::createMultiSimComm(world->world, rank, *settings, made);
    if (!status.isOk()) return toResult(kFunction, status);
    liveMultiComms().add(made.get());
    *comm = made.release();
    return prSuccess;
  });
}

prResult_t prMultiCommInitSimAll(prMultiSimWorld_t world, const prConfig_t* config, prMultiComm_t* comms) noexcept {
  constexpr const char* kFunction = "prMultiCommInitSimAll";
  // The size is read before the checks (to clear `comms` whatever happens), so only from a live world.
  const bool live = world != nullptr && liveMultiWorlds().contains(world);
  const int size = live ? world->world->worldSize() : 0;
  if (comms != nullptr) {
    for (int r = 0; r < size; ++r) comms[r] = nullptr;
  }
  return guarded(kFunction, [&]() -> prResult_t {
    const prResult_t checked = checkMultiWorld(kFunction, world);
    if (checked != prSuccess) return checked;
    if (comms == nullptr) {
      return nullArgument(kFunction, "comms", "pass an array of as many prMultiComm_t as the world has ranks");
    }
    auto settings = peerreduce::capi::toConfig(config);
    if (!settings.isOk()) return toResult(kFunction, settings.status());
    std::vector<std::unique_ptr<prMultiComm>> made(static_cast<std::size_t>(size));
    std::vector<peerreduce::Status> results(static_cast<std::size_t>(size));
    peerreduce::sim::runOnRankThreads(size, [&](int r) {
      const auto i = static_cast<std::size_t>(r);
      results[i] = peerreduce::capi::createMultiSimComm(world->world, r, *settings, made[i]);
    });
    for (int r = 0; r < size; ++r) {
      const peerreduce::Status& result = results[static_cast<std::size_t>(r)];
      if (!result.isOk()) return toResult(kFunction, result.withContext("rank " + std::to_string(r)));
    }
    for (int r = 0; r < size; ++r) {
      liveMultiComms().add(made[static_cast<std::size_t>(r)].get());
      comms[r] = made[static_cast<std::size_t>(r)].release();
    }
    return prSuccess;
  });
}

}  // extern "C"
