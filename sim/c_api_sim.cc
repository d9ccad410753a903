// The simulator half of the C API (peerreduce/peerreduce_sim.h): prSimWorld* and prCommInitSim*. It lives
// in peerreduce_sim because it needs SimWorld; the shared helpers are in lib/api/c_api_internal.h.
#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "c_api_sim_internal.h"
#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/simulator.h"

namespace peerreduce::capi {
namespace {

// The live worlds, checked as liveComms() checks communicators.
HandleRegistry& liveWorlds() {
  static HandleRegistry registry;
  return registry;
}

constexpr const char* kWorldHint = "pass a world made by prSimWorldCreate";

// Creates one rank's communicator; never throws (it runs on its own thread in prCommInitSimAll).
Status createSimComm(const std::shared_ptr<sim::SimWorld>& world, int rank, const Config& config,
                     std::unique_ptr<prComm>& out) noexcept {
  return createRankGuarded(rank, [&]() -> Status {
    auto comm = Communicator::create(rank, world->worldSize(), world->bootstrap(rank), world->transport(rank), config);
    if (!comm.isOk()) return comm.status();
    out = std::make_unique<prComm>(
        prComm{std::move(comm).value(), world, -1, world->bootstrap(rank), simSplitPlacement(world)});
    return Status::ok();
  });
}

// The error to show when several ranks failed. A rank whose own step failed reports the cause; the
// others only learn that "rank r failed to ...; see that rank's error" (kUnavailable), so prefer an
// error of another kind, in rank order.
const Status& mostInformative(const std::vector<Status>& results) {
  const Status* first = nullptr;
  for (const Status& status : results) {
    if (status.isOk()) continue;
    if (status.code() != ErrorCode::kUnavailable) return status;
    if (first == nullptr) first = &status;
  }
  return *first;  // precondition: some rank failed
}

}  // namespace
}  // namespace peerreduce::capi

using peerreduce::capi::guarded;
using peerreduce::capi::kWorldHint;
using peerreduce::capi::liveWorlds;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;
using peerreduce::capi::unknownHandle;

extern "C" {

prResult_t prSimWorldCreate(int nranks, uint64_t seed, prSimWorld_t* world) noexcept {
  constexpr const char* kFunction = "prSimWorldCreate";
  if (world != nullptr) *world = nullptr;
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", "pass the address of a prSimWorld_t to receive it");
    peerreduce::sim::SimOptions options;
    options.seed = seed;
    auto created = peerreduce::sim::SimWorld::create(nranks, options);
    if (!created.isOk()) return toResult(kFunction, created.status());
    auto made = std::make_unique<prSimWorld>(prSimWorld{std::move(created).value()});
    liveWorlds().add(made.get());
    *world = made.release();
    return prSuccess;
  });
}

prResult_t prSimWorldDestroy(prSimWorld_t world) noexcept {
  constexpr const char* kFunction = "prSimWorldDestroy";
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!liveWorlds().remove(world)) return unknownHandle(kFunction, "world", kWorldHint);
    delete world;
    return prSuccess;
  });
}

prResult_t prSimWorldRun(prSimWorld_t world) noexcept {
  constexpr const char* kFunction = "prSimWorldRun";
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!liveWorlds().contains(world)) return unknownHandle(kFunction, "world", kWorldHint);
    return toResult(kFunction, world->world->runUntilIdle());
  });
}

prResult_t prCommInitSimAll(prSimWorld_t world, const prConfig_t* config, prComm_t* comms) noexcept {
  constexpr const char* kFunction = "prCommInitSimAll";
  // The size is read before the checks (to clear `comms` whatever happens), so only from a live world.
  const bool live = world != nullptr && liveWorlds().contains(world);
  const int size = live ? world->world->worldSize() : 0;
  if (comms != nullptr) {
    for (int r = 0; r < size; ++r) comms[r] = nullptr;
  }
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!live) return unknownHandle(kFunction, "world", kWorldHint);
    if (comms == nullptr) {
      return nullArgument(kFunction, "comms", "pass an array of as many prComm_t as the world has ranks");
    }
    auto config_or = peerreduce::capi::toConfig(config);
    if (!config_or.isOk()) return toResult(kFunction, config_or.status());
    const peerreduce::Config& settings = *config_or;
    const auto n = static_cast<std::size_t>(size);
    std::vector<std::unique_ptr<prComm>> made(n);
    std::vector<peerreduce::Status> results(n);
    // Creation is collective, so every rank needs its own thread.
    std::vector<std::thread> threads;
    threads.reserve(n);
    try {
      for (int r = 0; r < size; ++r) {
        threads.emplace_back([&, r] {
          const auto i = static_cast<std::size_t>(r);
          results[i] = peerreduce::capi::createSimComm(world->world, r, settings, made[i]);
        });
      }
    } catch (...) {
      // A thread that could not start leaves its rank absent: the started ones then fail with kTimeout
      // within the configured timeout, and must be joined before anything unwinds past them.
      for (auto& thread : threads) thread.join();
      throw;
    }
    for (auto& thread : threads) thread.join();
    for (const auto& status : results) {
      if (!status.isOk()) return toResult(kFunction, peerreduce::capi::mostInformative(results));
    }
    try {
      for (std::size_t i = 0; i < n; ++i) peerreduce::capi::liveComms().add(made[i].get());
    } catch (...) {
      // `made` frees them all on the way out: none may stay registered.
      for (std::size_t i = 0; i < n; ++i) peerreduce::capi::liveComms().remove(made[i].get());
      throw;
    }
    for (std::size_t i = 0; i < n; ++i) comms[i] = made[i].release();
    return prSuccess;
  });
}

prResult_t prCommInitSimRank(prSimWorld_t world, int rank, const prConfig_t* config, prComm_t* comm) noexcept {
  constexpr const char* kFunction = "prCommInitSimRank";
  if (comm != nullptr) *comm = nullptr;
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!liveWorlds().contains(world)) return unknownHandle(kFunction, "world", kWorldHint);
    if (comm == nullptr) return nullArgument(kFunction, "comm", "pass the address of a prComm_t to receive it");
    const prResult_t in_world = peerreduce::capi::checkSimRank(kFunction, rank, world->world->worldSize());
    if (in_world != prSuccess) return in_world;
    auto config_or = peerreduce::capi::toConfig(config);
    if (!config_or.isOk()) return toResult(kFunction, config_or.status());
    std::unique_ptr<prComm> made;
    const peerreduce::Status status = peerreduce::capi::createSimComm(world->world, rank, *config_or, made);
    if (!status.isOk()) return toResult(kFunction, status);
    peerreduce::capi::liveComms().add(made.get());
    *comm = made.release();
    return prSuccess;
  });
}

}  // extern "C"

namespace peerreduce::capi {

TransportFactory simTransports(const std::shared_ptr<sim::SimWorld>& world) {
  std::weak_ptr<sim::SimWorld> weak = world;
  return [weak](int rank, int nranks, const Config&) -> StatusOr<std::shared_ptr<Transport>> {
    auto alive = weak.lock();
    if (!alive) return unavailableError("the simulated world of this bootstrap was destroyed");
    if (nranks != alive->worldSize()) {
      return invalidArgumentError("a communicator of " + std::to_string(nranks) + " ranks on a simulated world of " +
                                  std::to_string(alive->worldSize()));
    }
    return alive->transport(rank);
  };
}

}  // namespace peerreduce::capi

extern "C" {

prResult_t prSimWorldBootstrap(prSimWorld_t world, int rank, prBootstrap_t* bootstrap) noexcept {
  constexpr const char* kFunction = "prSimWorldBootstrap";
  return guarded(kFunction, [&]() -> prResult_t {
    if (bootstrap == nullptr) return nullArgument(kFunction, "bootstrap", "pass the address of a prBootstrap_t");
    *bootstrap = nullptr;
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!liveWorlds().contains(world)) return unknownHandle(kFunction, "world", kWorldHint);
    const prResult_t in_world = peerreduce::capi::checkSimRank(kFunction, rank, world->world->worldSize());
    if (in_world != prSuccess) return in_world;
    auto handle = std::make_unique<prBootstrap>();
    handle->bootstrap = world->world->bootstrap(rank);
    handle->transports = peerreduce::capi::simTransports(world->world);
    handle->owner = world->world;
    handle->describe = "simulated world";
    handle->placement = peerreduce::capi::simSplitPlacement(world->world);
    *bootstrap = peerreduce::capi::publishBootstrap(std::move(handle));
    return prSuccess;
  });
}

prResult_t prSimWorldAttachBootstrap(prSimWorld_t world, prBootstrap_t bootstrap) noexcept {
  constexpr const char* kFunction = "prSimWorldAttachBootstrap";
  return guarded(kFunction, [&]() -> prResult_t {
    if (world == nullptr) return nullArgument(kFunction, "world", kWorldHint);
    if (!liveWorlds().contains(world)) return unknownHandle(kFunction, "world", kWorldHint);
    constexpr const char* kHint = "pass a bootstrap made by prBootstrapCreate";
    if (bootstrap == nullptr) return nullArgument(kFunction, "bootstrap", kHint);
    if (!peerreduce::capi::liveBootstraps().contains(bootstrap)) return unknownHandle(kFunction, "bootstrap", kHint);
    if (bootstrap->bootstrap->size() != world->world->worldSize()) {
      return toResult(kFunction, peerreduce::invalidArgumentError(
                                     "a bootstrap of " + std::to_string(bootstrap->bootstrap->size()) +
                                     " ranks on a simulated world of " + std::to_string(world->world->worldSize())));
    }
    bootstrap->transports = peerreduce::capi::simTransports(world->world);
    bootstrap->owner = world->world;
    bootstrap->placement = peerreduce::capi::simSplitPlacement(world->world);
    return prSuccess;
  });
}

}  // extern "C"
