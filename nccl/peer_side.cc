#include "nccl/peer_side.h"

#include <cstdint>
#include <memory>
#include <string>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "api/communicator_impl.h"
#include "bootstrap/host_identity.h"
#include "bootstrap/rank_agreement.h"
#include "nccl/device_staging.h"
#include "nccl/shadow_bootstrap.h"
#include "nccl/simulated_worlds.h"
#include "nccl/take_table.h"
#include "nccl/type_mapping.h"
#include "peerreduce/c_bootstrap.h"
#include "peerreduce/config.h"
#include "peerreduce/gpu.h"
#include "peerreduce/topology.h"
#include "peerreduce/types.h"
#include "util/log.h"

namespace peerreduce::nccl {
namespace {

enum class Placement { kNone, kGpu, kSimulator };

// Where peerreduce's communicators of this process run: the same on every rank of a world (the build and
// the compared PEERREDUCE_NCCL_SIMULATE decide it).
Placement placementOf(const NcclSettings& settings) {
  if (settings.simulate_seed) return Placement::kSimulator;
  return std::string_view(gpuPlatformName()) == "cuda" ? Placement::kGpu : Placement::kNone;
}

PeerSide absent(std::string why) {
  PeerSide side;
  side.absent_reason = std::move(why);
  return side;
}

// One rank's outcome, gathered so that every rank keeps its communicator only when every rank made one.
struct Outcome {
  std::int32_t code;  // an ErrorCode
};

// The take table's key from what the communicator agreed on at creation: its architecture (its tuning tables'
// key) and whether any pair is host-staged (its topology, the link mask and failed probes applied). The C API
// has no query for either; the library is linked with peerreduce's, so it reads the communicator's own agreed
// values rather than asking this rank's device, which could differ from rank 0's.
std::string agreedTakeArchitecture(prComm_t comm) {
  const auto& impl = CommunicatorAccess::impl(*comm->comm);
  return takeTableArchitecture(impl.architecture, impl.topology.hasLinkOf(LinkClass::kHostStaged));
}

// Communicators made with `bootstrap` run on the GPU the NCCL communicator uses.
void placeOnGpu(prBootstrap_t bootstrap, int device, int local_rank) {
  bootstrap->transports = [device, local_rank](int rank, int nranks,
                                               const Config&) -> StatusOr<std::shared_ptr<Transport>> {
    GpuTransportOptions options;
    options.device = device;
    options.local_rank = local_rank;
    return createGpuTransport(rank, nranks, options);
  };
}

// Steps 2-3 of the header on a bootstrap every rank has: the communicator, or why there is none.
StatusOr<PeerSide> createOverBootstrap(const PeerSideRequest& request, Placement placement,
                                       const std::shared_ptr<Bootstrap>& bootstrap, std::chrono::milliseconds timeout) {
  const RankAgreement agreement(*bootstrap, timeout);
  PR_RETURN_IF_ERROR(
      agreement.sameValue(request.settings.agreedFingerprint(),
                          "PEERREDUCE_NCCL_TAKE, PEERREDUCE_NCCL_MAX_BYTES, PEERREDUCE_NCCL_TAKE_AVG, the take table "
                          "(PEERREDUCE_NCCL_TAKE_TABLE) and PEERREDUCE_NCCL_SIMULATE"));
  // A rank that cannot name its host still takes part in the gathering, so no other rank waits for it.
  const StatusOr<std::string> identity = hostIdentity();
  auto groups = gatherHostGroups(*bootstrap, identity.isOk() ? *identity : std::string("unknown host"), timeout);
  PR_RETURN_IF_ERROR(agreement.outcome(identity.isOk() ? Status::ok() : identity.status(), "name its machine"));
  if (!groups.isOk()) return groups.status();
  if (groups->node_count > 1 && placement == Placement::kGpu) {
    return absent("its " + std::to_string(request.size) + " ranks are on " + std::to_string(groups->node_count) +
                  " machines; peerreduce runs within one machine");
  }
  prBootstrap_t handle = nullptr;
  const prResult_t published = publishCBootstrap(
      "ncclCommInitRank", [&bootstrap]() -> StatusOr<std::shared_ptr<Bootstrap>> { return bootstrap; },
      "the shadow NCCL communicator", &handle);
  if (published != prSuccess) return cApiFailure(published);
  // The handle is released on every path out; the communicator keeps what it needs.
  const std::unique_ptr<prBootstrap, prResult_t (*)(prBootstrap_t)> release(handle, &prBootstrapDestroy);
  Status placed = Status::ok();
  if (placement == Placement::kSimulator) {
    placed = attachSimulatedWorld(agreement, *request.settings.simulate_seed, handle);
  } else {
    placeOnGpu(handle, request.device, groups->local_rank);
  }
  PR_RETURN_IF_ERROR(placed);
  PR_ASSIGN_OR_RETURN(const prConfig_t config, peerSideConfig(request.settings));
  PeerSide side;
  side.on_simulator = placement == Placement::kSimulator;
  const prResult_t created = prCommInitRank(&side.comm, request.size, request.rank, handle, &config);
  const Status mine = created == prSuccess ? Status::ok() : cApiFailure(created);
  auto outcomes = agreement.gather(Outcome{static_cast<std::int32_t>(mine.code())});
  if (!outcomes.isOk()) {
    destroyPeerSide(side, true);
    return outcomes.status();
  }
  for (int r = 0; r < request.size; ++r) {
    const auto code = static_cast<ErrorCode>((*outcomes)[static_cast<std::size_t>(r)].code);
    if (code == ErrorCode::kOk) continue;
    destroyPeerSide(side, true);
    const std::string who = "rank " + std::to_string(r) + " could not create peerreduce's communicator (" +
                            std::string(errorCodeName(code)) + ")";
    if (request.settings.take.mode == TakeMode::kAll) {
      return mine.isOk() ? Status(code, who + "; PEERREDUCE_NCCL_TAKE=all needs it on every rank")
                         : mine.withContext("PEERREDUCE_NCCL_TAKE=all needs peerreduce's communicator");
    }
    PR_WARN(request.rank, "nccl: %s; every call of this communicator goes to NCCL%s%s", who.c_str(),
            mine.isOk() ? "" : ": ", mine.isOk() ? "" : mine.message().c_str());
    return absent(who);
  }
  side.architecture = agreedTakeArchitecture(side.comm);
  return side;
}

}  // namespace

StatusOr<prConfig_t> peerSideConfig(const NcclSettings& settings) {
  prConfig_t config{};
  const prResult_t read = prConfigInit(&config);
  if (read != prSuccess) return cApiFailure(read);
  config.timeout_ms = settings.timeout_ms;
  return config;
}

StatusOr<PeerSide> createPeerSide(RealNccl& real, const PeerSideRequest& request) {
  if (request.settings.take.mode == TakeMode::kNone) return absent("PEERREDUCE_NCCL_TAKE=none");
  if (request.size > kMaxWorldSize) {
    return absent("it has " + std::to_string(request.size) + " ranks; peerreduce runs at most " +
                  std::to_string(kMaxWorldSize));
  }
  const Placement placement = placementOf(request.settings);
  if (placement == Placement::kNone) {
    return absent(std::string("this build of peerreduce has no CUDA (GPU ") + gpuPlatformName() +
                  "); rebuild with PEERREDUCE_GPU=cuda");
  }
  PR_ASSIGN_OR_RETURN(const Config config, Config::fromEnvironment());
  std::shared_ptr<DeviceStaging> staging;
  if (placement == Placement::kSimulator) {
    staging = createHostStaging();
  } else {
    PR_ASSIGN_OR_RETURN(std::unique_ptr<DeviceStaging> gpu, createGpuStaging(request.device));
    staging = std::move(gpu);
  }
  PR_ASSIGN_OR_RETURN(std::shared_ptr<Bootstrap> bootstrap,
                      createShadowBootstrap(request.rank, request.size, real, request.real_comm, std::move(staging)));
  auto side = createOverBootstrap(request, placement, bootstrap, config.bootstrapTimeout());
  if (side.isOk() && side->comm != nullptr) {
    PR_INFO(request.rank, "nccl: peerreduce's communicator of %d ranks is ready on %s (PEERREDUCE_NCCL_TAKE=%s)",
            request.size, side->on_simulator ? "a simulated world" : "the GPU",
            takeModeName(request.settings.take.mode));
  }
  return side;
}

void destroyPeerSide(PeerSide& side, bool abort) {
  if (side.comm == nullptr) return;
  if (abort) (void)prCommAbort(side.comm);
  (void)prCommDestroy(side.comm);
  side.comm = nullptr;
}

}  // namespace peerreduce::nccl
