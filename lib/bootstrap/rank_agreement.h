// Agreement among the ranks of a bootstrap: every rank contributes a fixed-size record and every rank
// learns the same verdict. The one place where communicator creation, buffer registration, the C
// API's transport choice and recovery find out together whether a step succeeded everywhere, so that
// no rank goes on while another failed (and none waits for a rank that gave up).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"

namespace peerreduce {

class RankAgreement {
 public:
  // `timeout` bounds each collective (Config::bootstrapTimeout()).
  RankAgreement(Bootstrap& bootstrap, std::chrono::milliseconds timeout) : bootstrap_(bootstrap), timeout_(timeout) {}

  // Every rank reports whether its local step (`what`, e.g. "map its peers' memory") succeeded. A rank
  // whose step failed gets its own error back; every other rank gets kUnavailable naming the first
  // rank that failed. All ranks return together.
  Status outcome(const Status& local, std::string_view what) const;

  // Every rank must hold the same `value` (a hash of a file, say): kMismatch naming the first rank
  // that holds another, on every rank.
  Status sameValue(std::uint64_t value, std::string_view what) const;

  // Every rank's `mine`, in rank order (a plain, fixed-size record).
  template <typename Record>
  StatusOr<std::vector<Record>> gather(const Record& mine) const {
    static_assert(std::is_trivially_copyable_v<Record>, "records cross the bootstrap as bytes");
    std::vector<Record> all(static_cast<std::size_t>(bootstrap_.size()));
    PR_RETURN_IF_ERROR(bootstrap_.allGather(std::as_bytes(std::span<const Record>(&mine, 1)),
                                            std::as_writable_bytes(std::span<Record>(all)), timeout_));
    return all;
  }

  int rank() const { return bootstrap_.rank(); }
  int size() const { return bootstrap_.size(); }

 private:
  Bootstrap& bootstrap_;
  std::chrono::milliseconds timeout_;
};

}  // namespace peerreduce
