// prCommInitAll: one process drives several GPUs from one thread, as NCCL's ncclCommInitAll. The ranks
// meet through an in-process bootstrap; creation is collective, so each rank is made on a thread of its
// own and the call returns when every one is made, or, when any failed, with none (the others are
// destroyed before anything is published).
#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/communicator.h"

namespace peerreduce::capi {
namespace {

constexpr const char* kInitAllFunction = "prCommInitAll";

// Rank `rank` of the in-process world on `device`.
StatusOr<std::unique_ptr<prComm>> makeRank(const std::shared_ptr<Bootstrap>& bootstrap, int rank, int nranks,
                                           const Config& config, int device) {
  prBootstrap handle{bootstrap, {}, nullptr, std::string(kInitAllFunction) + "'s in-process group", {}};
  int device_used = -1;
  PR_ASSIGN_OR_RETURN(auto transport, transportFor(handle, rank, nranks, config, device, &device_used));
  PR_ASSIGN_OR_RETURN(auto comm, Communicator::create(rank, nranks, bootstrap, std::move(transport), config));
  return std::make_unique<prComm>(prComm{std::move(comm), nullptr, device_used, bootstrap, {}});
}

// The devices of the ranks: devlist's, or 0..ndev-1; each at most once (two ranks of one world on one
// device is what the in-process tests do on purpose, never what a program asking for one rank per GPU
// means).
StatusOr<std::vector<int>> devicesOf(int ndev, const int* devlist) {
  std::vector<int> devices(static_cast<std::size_t>(ndev));
  for (int i = 0; i < ndev; ++i) {
    const int d = devlist == nullptr ? i : devlist[i];
    if (d < 0) {
      return invalidArgumentError("devlist[" + std::to_string(i) + "] is " + std::to_string(d) +
                                  ": a device ordinal is 0 or more");
    }
    const auto seen = std::find(devices.begin(), devices.begin() + i, d);
    if (seen != devices.begin() + i) {
      return invalidArgumentError("devlist names device " + std::to_string(d) + " twice (entries " +
                                  std::to_string(seen - devices.begin()) + " and " + std::to_string(i) +
                                  "): one rank per device");
    }
    devices[static_cast<std::size_t>(i)] = d;
  }
  return devices;
}

}  // namespace
}  // namespace peerreduce::capi

extern "C" {

prResult_t prCommInitAll(prComm_t* comms, int ndev, const int* devlist, const prConfig_t* config) noexcept {
  using namespace peerreduce;
  using namespace peerreduce::capi;
  return guarded(kInitAllFunction, [&]() -> prResult_t {
    if (comms == nullptr)
      return nullArgument(kInitAllFunction, "comms", "pass an array of ndev prComm_t to receive them");
    if (ndev < 1 || ndev > kMaxWorldSize) {
      return toResult(kInitAllFunction, invalidArgumentError("ndev is " + std::to_string(ndev) + "; a world has 1.." +
                                                             std::to_string(kMaxWorldSize) + " ranks"));
    }
    std::fill(comms, comms + ndev, nullptr);
    auto devices = devicesOf(ndev, devlist);
    if (!devices.isOk()) return toResult(kInitAllFunction, devices.status());
    auto settings = toConfig(config);
    if (!settings.isOk()) return toResult(kInitAllFunction, settings.status());
    auto group = createInProcessGroup(ndev);
    if (!group.isOk()) return toResult(kInitAllFunction, group.status());

    const auto n = static_cast<std::size_t>(ndev);
    std::vector<std::unique_ptr<prComm>> made(n);
    std::vector<Status> outcomes(n, Status::ok());
    {
      std::vector<std::thread> threads;
      threads.reserve(n);
      for (std::size_t r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
          try {
            Config mine = *settings;
            mine.device = (*devices)[r];
            auto rank = makeRank((*group)[r], static_cast<int>(r), ndev, mine, (*devices)[r]);
            if (rank.isOk()) {
              made[r] = std::move(rank).value();
            } else {
              outcomes[r] = rank.status();
            }
          } catch (const std::exception& e) {
            outcomes[r] = internalError(std::string("rank ") + std::to_string(r) + ": unexpected exception (" +
                                        e.what() + "); this is a peerreduce bug, please report it");
          }
        });
      }
      for (std::thread& t : threads) t.join();  // every rank's creation is bounded by the bootstrap timeout
    }
    // All or nothing: the first failing rank's error (creation's agreement names the rank that failed).
    const auto failed = std::find_if(outcomes.begin(), outcomes.end(), [](const Status& s) { return !s.isOk(); });
    if (failed != outcomes.end()) return toResult(kInitAllFunction, *failed);  // `made` destroys the others
    for (std::size_t r = 0; r < n; ++r) {
      liveComms().add(made[r].get());
      comms[r] = made[r].release();
    }
    return prSuccess;
  });
}

}  // extern "C"
