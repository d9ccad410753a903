// prCommSplit: NCCL's ncclCommSplit. The ranks of the parent all-gather (color, key) over the parent's
// bootstrap, each computes every child's members the same way, and each child is created over a bootstrap
// carried by the parent's (bootstrap/split_bootstrap.h), so children of any launcher need nothing the
// launcher does not already give. A rank that refuses its arguments still takes part in the exchange, so
// every other rank learns of it at once instead of waiting out the bootstrap timeout.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "bootstrap/rank_agreement.h"
#include "bootstrap/split_bootstrap.h"
#include "peerreduce/communicator.h"

namespace peerreduce::capi {
namespace {

constexpr const char* kSplitFunction = "prCommSplit";

// One rank's part of the exchange: fixed size, so the bootstrap gathers equal blocks.
struct SplitRecord {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t color;
  std::int32_t key;
  std::uint32_t refused;  // nonzero: the rank refused its arguments and reports why itself
  std::uint32_t reserved;
  std::uint64_t split;  // names this split in the process (rank 0's is used): simulated children meet by it
};
constexpr std::uint32_t kSplitMagic = 0x50525350;  // "PRSP"
constexpr std::uint32_t kSplitVersion = 1;

// A number no other split of this process has had.
std::uint64_t nextSplitNumber() {
  static std::atomic<std::uint64_t> splits{0};
  return splits.fetch_add(1, std::memory_order_relaxed) + 1;
}

std::string rankName(int rank) { return "rank " + std::to_string(rank); }

// This rank's arguments, checked before the exchange.
Status checkArguments(int rank, int color, const prComm_t* newcomm) {
  if (newcomm == nullptr) {
    return invalidArgumentError(rankName(rank) + ": newcomm is NULL; pass the address of a prComm_t to receive it");
  }
  if (color < 0 && color != PR_SPLIT_NOCOLOR) {
    return invalidArgumentError(rankName(rank) + ": color " + std::to_string(color) +
                                " is negative; a color is 0 or more, or PR_SPLIT_NOCOLOR (" +
                                std::to_string(PR_SPLIT_NOCOLOR) + ") for a rank in no child");
  }
  return Status::ok();
}

// Every rank's record, or the error every rank shares: another rank refused, or sent no split record.
StatusOr<std::vector<SplitRecord>> exchange(Bootstrap& parent, const SplitRecord& mine, const Config& config) {
  PR_ASSIGN_OR_RETURN(std::vector<SplitRecord> all, RankAgreement(parent, config.bootstrapTimeout()).gather(mine));
  for (std::size_t r = 0; r < all.size(); ++r) {
    const SplitRecord& other = all[r];
    if (other.magic != kSplitMagic || other.version != kSplitVersion) {
      return mismatchError(rankName(static_cast<int>(r)) +
                           " did not call prCommSplit (or runs another peerreduce) while this rank did; every rank "
                           "of the parent calls it at the same point of its sequence of collective calls");
    }
  }
  return all;
}

// The parent ranks of the child of `color` in child rank order: by key, ties by parent rank.
std::vector<int> membersOf(const std::vector<SplitRecord>& all, int color) {
  std::vector<int> members;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].color == color) members.push_back(static_cast<int>(r));
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
  });
  return members;
}

// What a child rank's creation made, and where it runs.
struct MadeChild {
  std::unique_ptr<Communicator> comm;
  ChildPlace place;
  int device = -1;
};

// Creates this rank's child over `bootstrap`. Collective over the child's members only.
StatusOr<MadeChild> createChild(const prComm& parent, const std::shared_ptr<SplitBootstrap>& bootstrap,
                                const ChildOfSplit& child, const Config& config, int device) {
  MadeChild made;
  if (parent.placement) {
    PR_ASSIGN_OR_RETURN(made.place, parent.placement(child));
  }
  prBootstrap handle{bootstrap, made.place.transports, made.place.owner, "the split's bootstrap", {}};
  const int size = static_cast<int>(child.members.size());
  PR_ASSIGN_OR_RETURN(auto transport, transportFor(handle, child.rank, size, config, device, &made.device));
  PR_ASSIGN_OR_RETURN(made.comm, Communicator::create(child.rank, size, bootstrap, std::move(transport), config));
  return made;
}

// The device of a child on GPUs: the one `config` names, else the parent's.
int childDevice(const prComm& parent, const prConfig_t* config) {
  return config != nullptr && config->device >= 0 ? config->device : parent.device;
}

}  // namespace
}  // namespace peerreduce::capi

extern "C" {

prResult_t prCommSplit(prComm_t comm, int color, int key, prComm_t* newcomm, const prConfig_t* config) noexcept {
  using namespace peerreduce;
  using namespace peerreduce::capi;
  return guarded(kSplitFunction, [&]() -> prResult_t {
    if (newcomm != nullptr) *newcomm = nullptr;
    if (const prResult_t r = checkComm(kSplitFunction, comm); r != prSuccess) return r;
    const Communicator& parent = *comm->comm;
    if (parent.aborted()) {
      return toResult(kSplitFunction, abortedError(rankName(parent.rank()) +
                                                   ": prCommSplit on a communicator that was aborted; destroy it and "
                                                   "create a new one"));
    }
    if (comm->bootstrap == nullptr) {
      return toResult(kSplitFunction,
                      internalError(rankName(parent.rank()) +
                                    ": the communicator has no bootstrap to split over; please report it"));
    }
    // A refusing rank still takes part in the exchange below, so no other rank waits for it.
    Status local = checkArguments(parent.rank(), color, newcomm);
    StatusOr<Config> settings = config == nullptr ? StatusOr<Config>(parent.config()) : toConfig(config);
    if (local.isOk() && !settings.isOk()) local = settings.status();
    const SplitRecord mine{kSplitMagic, kSplitVersion, color, key, local.isOk() ? 0u : 1u, 0, nextSplitNumber()};
    auto all = exchange(*comm->bootstrap, mine, parent.config());
    if (!local.isOk()) return toResult(kSplitFunction, local);
    if (!all.isOk()) return toResult(kSplitFunction, all.status());
    for (std::size_t r = 0; r < all->size(); ++r) {
      if ((*all)[r].refused != 0) {
        return toResult(kSplitFunction, remoteError(rankName(static_cast<int>(r)) +
                                                    " refused its arguments to prCommSplit, so no rank splits; see "
                                                    "that rank's error"));
      }
    }

    auto rounds = std::make_shared<SplitRounds>(comm->bootstrap, color);
    if (color == PR_SPLIT_NOCOLOR) {
      // In no child, but every child's collectives are rounds this rank must answer.
      return toResult(kSplitFunction, rounds->finish(parent.config().bootstrapTimeout()));
    }
    const std::vector<int> members = membersOf(*all, color);
    const auto self = std::find(members.begin(), members.end(), parent.rank());
    const ChildOfSplit child{(*all)[0].split, color, members, static_cast<int>(self - members.begin())};
    auto bootstrap = std::make_shared<SplitBootstrap>(rounds, members, child.rank);
    auto made = createChild(*comm, bootstrap, child, *settings, childDevice(*comm, config));
    const Status finished = rounds->finish(parent.config().bootstrapTimeout());
    rounds->detach();
    if (!made.isOk()) return toResult(kSplitFunction, made.status());
    if (!finished.isOk()) return toResult(kSplitFunction, finished);  // the child is destroyed: nothing half-made
    bootstrap->detach(made->place.bootstrap);
    auto handle = std::make_unique<prComm>(
        prComm{std::move(made->comm), made->place.owner, made->device, bootstrap, made->place.placement});
    liveComms().add(handle.get());
    *newcomm = handle.release();
    return prSuccess;
  });
}

}  // extern "C"
