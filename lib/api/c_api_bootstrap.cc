// The C API's bootstraps and prCommInitRank: one call shape for every launcher and every transport (the
// bootstrap decides where the communicator runs: a simulated world's, or a GPU).
#include <memory>
#include <string>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "bootstrap/callback_bootstrap.h"
#include "bootstrap/host_identity.h"
#include "bootstrap/rank_agreement.h"
#include "peerreduce/c_bootstrap.h"
#include "peerreduce/gpu.h"

namespace peerreduce::capi {

HandleRegistry& liveBootstraps() {
  static HandleRegistry registry;
  return registry;
}

prBootstrap_t publishBootstrap(std::unique_ptr<prBootstrap> made) {
  liveBootstraps().add(made.get());
  return made.release();
}

namespace {

// The default place of a communicator: a GPU, the one Config::device names (by default the device
// current on the calling thread, NCCL's rule). Collective when no device is given: every rank gathers the
// host identities (so a rank's local rank is known whatever each rank's setting), even one that will fail
// to open its device.
StatusOr<std::shared_ptr<Transport>> gpuTransportFor(Bootstrap& bootstrap, int rank, int nranks, const Config& config,
                                                     int device, int* device_used) {
  int local_rank = -1;
  if (device < 0) {
    // A rank that cannot name its host still takes part in the gathering, so no other rank waits for it.
    const StatusOr<std::string> identity = hostIdentity();
    auto groups = gatherHostGroups(bootstrap, identity.isOk() ? *identity : std::string("unknown host"),
                                   config.bootstrapTimeout());
    if (!identity.isOk()) return identity.status();
    if (!groups.isOk()) return groups.status();
    local_rank = groups->local_rank;
    PR_ASSIGN_OR_RETURN(device, resolveGpuDevice(config.device, local_rank, rank));
  }
  *device_used = device;
  GpuTransportOptions options;
  options.device = device;
  options.local_rank = local_rank;
  return createGpuTransport(rank, nranks, options);
}

}  // namespace

StatusOr<std::shared_ptr<Transport>> transportFor(prBootstrap& bootstrap, int rank, int nranks, const Config& config,
                                                  int device, int* device_used) {
  *device_used = -1;
  auto transport = bootstrap.transports
                       ? bootstrap.transports(rank, nranks, config)
                       : gpuTransportFor(*bootstrap.bootstrap, rank, nranks, config, device, device_used);
  // Every rank learns whether every rank has a transport.
  PR_RETURN_IF_ERROR(RankAgreement(*bootstrap.bootstrap, config.bootstrapTimeout())
                         .outcome(transport.isOk() ? Status::ok() : transport.status(), "open its transport"));
  return transport;
}

}  // namespace peerreduce::capi

namespace peerreduce {

prResult_t publishCBootstrap(const char* function, const std::function<StatusOr<std::shared_ptr<Bootstrap>>()>& make,
                             const char* describe, prBootstrap_t* bootstrap) noexcept {
  return capi::guarded(function, [&]() -> prResult_t {
    if (bootstrap == nullptr) return capi::nullArgument(function, "bootstrap", "pass the address of a prBootstrap_t");
    *bootstrap = nullptr;
    if (!make) return capi::nullArgument(function, "make", "pass a function that makes the bootstrap");
    auto made = make();
    if (!made.isOk()) return capi::toResult(function, made.status());
    if (*made == nullptr) {
      return capi::toResult(function, internalError(std::string(describe != nullptr ? describe : "the") +
                                                    " bootstrap factory returned no bootstrap"));
    }
    auto handle = std::make_unique<prBootstrap>();
    handle->bootstrap = std::move(made).value();
    handle->describe = describe != nullptr ? describe : "application bootstrap";
    *bootstrap = capi::publishBootstrap(std::move(handle));
    return prSuccess;
  });
}

}  // namespace peerreduce

using peerreduce::capi::guarded;
using peerreduce::capi::liveBootstraps;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;
using peerreduce::capi::unknownHandle;

extern "C" {

prResult_t prBootstrapCreate(int nranks, int rank, const prBootstrapCallbacks_t* callbacks,
                             prBootstrap_t* bootstrap) noexcept {
  constexpr const char* kFunction = "prBootstrapCreate";
  return guarded(kFunction, [&]() -> prResult_t {
    if (bootstrap == nullptr) return nullArgument(kFunction, "bootstrap", "pass the address of a prBootstrap_t");
    *bootstrap = nullptr;
    if (callbacks == nullptr) return nullArgument(kFunction, "callbacks", "pass the application's callbacks");
    peerreduce::BootstrapCallbacks made;
    if (callbacks->all_gather != nullptr) {
      made.all_gather = [fn = callbacks->all_gather, context = callbacks->context](
                            const void* send, void* recv, std::size_t bytes, std::size_t* gathered,
                            std::int64_t timeout_ms) { return fn(context, send, recv, bytes, gathered, timeout_ms); };
    }
    if (callbacks->barrier != nullptr) {
      made.barrier = [fn = callbacks->barrier, context = callbacks->context](std::int64_t timeout_ms) {
        return fn(context, timeout_ms);
      };
    }
    if (callbacks->name != nullptr) made.name = callbacks->name;
    auto created = peerreduce::createCallbackBootstrap(rank, nranks, std::move(made));
    if (!created.isOk()) return toResult(kFunction, created.status());
    auto handle = std::make_unique<prBootstrap>();
    handle->bootstrap = std::move(created).value();
    handle->describe = "application callbacks";
    *bootstrap = peerreduce::capi::publishBootstrap(std::move(handle));
    return prSuccess;
  });
}

prResult_t prBootstrapDestroy(prBootstrap_t bootstrap) noexcept {
  constexpr const char* kFunction = "prBootstrapDestroy";
  return guarded(kFunction, [&]() -> prResult_t {
    if (bootstrap == nullptr) return nullArgument(kFunction, "bootstrap", peerreduce::capi::kBootstrapHint);
    if (!liveBootstraps().remove(bootstrap))
      return unknownHandle(kFunction, "bootstrap", peerreduce::capi::kBootstrapHint);
    delete bootstrap;
    return prSuccess;
  });
}

prResult_t prCommInitRank(prComm_t* comm, int nranks, int rank, prBootstrap_t bootstrap,
                          const prConfig_t* config) noexcept {
  constexpr const char* kFunction = "prCommInitRank";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", "pass the address of a prComm_t to receive it");
    *comm = nullptr;
    if (bootstrap == nullptr) return nullArgument(kFunction, "bootstrap", peerreduce::capi::kBootstrapHint);
    if (!liveBootstraps().contains(bootstrap)) {
      return unknownHandle(kFunction, "bootstrap", peerreduce::capi::kBootstrapHint);
    }
    peerreduce::Bootstrap& rendezvous = *bootstrap->bootstrap;
    if (rendezvous.rank() != rank || rendezvous.size() != nranks) {
      return toResult(kFunction, peerreduce::invalidArgumentError(
                                     "rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                                     " was given the bootstrap of rank " + std::to_string(rendezvous.rank()) + " of " +
                                     std::to_string(rendezvous.size()) + " (" + bootstrap->describe + ")"));
    }
    auto settings = peerreduce::capi::toConfig(config);
    if (!settings.isOk()) return toResult(kFunction, settings.status());
    int device = -1;
    auto transport = peerreduce::capi::transportFor(*bootstrap, rank, nranks, *settings, -1, &device);
    if (!transport.isOk()) return toResult(kFunction, transport.status());
    auto created =
        peerreduce::Communicator::create(rank, nranks, bootstrap->bootstrap, std::move(transport).value(), *settings);
    if (!created.isOk()) return toResult(kFunction, created.status());
    auto handle = std::make_unique<prComm>(
        prComm{std::move(created).value(), bootstrap->owner, device, bootstrap->bootstrap, bootstrap->placement});
    peerreduce::capi::liveComms().add(handle.get());
    *comm = handle.release();
    return prSuccess;
  });
}

}  // extern "C"
