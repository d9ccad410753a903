#include "bootstrap/rank_agreement.h"

namespace peerreduce {

Status RankAgreement::outcome(const Status& local, std::string_view what) const {
  const std::uint8_t mine = local.isOk() ? 1 : 0;
  const StatusOr<std::vector<std::uint8_t>> all = gather(mine);
  if (!all.isOk()) {
    return all.status().withContext("rank " + std::to_string(rank()) + " agreeing whether every rank could " +
                                    std::string(what));
  }
  if (!local.isOk()) return local;
  for (std::size_t r = 0; r < all->size(); ++r) {
    if ((*all)[r] != 1) {
      return unavailableError("rank " + std::to_string(r) + " failed to " + std::string(what) +
                              "; see that rank's error");
    }
  }
  return Status::ok();
}

Status RankAgreement::sameValue(std::uint64_t value, std::string_view what) const {
  PR_ASSIGN_OR_RETURN(const std::vector<std::uint64_t> all, gather(value));
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] != value) {
      return mismatchError("rank " + std::to_string(r) + " has a different " + std::string(what) + " than rank " +
                           std::to_string(rank()));
    }
  }
  return Status::ok();
}

}  // namespace peerreduce
