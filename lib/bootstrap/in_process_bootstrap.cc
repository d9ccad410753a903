// In-process bootstrap: ranks are threads of one process sharing a rendezvous.
//
// Each collective is a round: ranks deposit their block, the last to arrive assembles the result and
// opens the next round. A round's result can be overwritten only by the next round completing, which
// needs every rank to arrive again, i.e. to have copied this round's result first. A rank whose wait
// expires marks the group broken (naming the ranks that never came), so no later call can wait on
// a round that will never complete.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>

#include "peerreduce/bootstrap.h"
#include "peerreduce/types.h"

namespace peerreduce {

Status Bootstrap::barrier(std::chrono::milliseconds timeout) {
  const std::byte token{0};
  std::vector<std::byte> all(static_cast<std::size_t>(size()));
  return allGather(std::span<const std::byte>(&token, 1), all, timeout);
}

namespace {

class Rendezvous {
 public:
  explicit Rendezvous(int size)
      : size_(size), blocks_(static_cast<std::size_t>(size)), arrived_(static_cast<std::size_t>(size), false) {}

  Status allGather(int rank, std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mutex_);
    if (!broken_.isOk()) return broken_;
    const std::uint64_t round = round_;
    blocks_[static_cast<std::size_t>(rank)].assign(mine.begin(), mine.end());
    arrived_[static_cast<std::size_t>(rank)] = true;
    if (++arrived_count_ == size_) {
      completeRound();
      cv_.notify_all();
    } else {
      const bool done = cv_.wait_until(lock, deadline, [&] { return round_ != round || !broken_.isOk(); });
      if (!done) {
        std::string missing;
        for (int r = 0; r < size_; ++r) {
          if (!arrived_[static_cast<std::size_t>(r)]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
        }
        broken_ = timeoutError("in-process bootstrap: rank " + std::to_string(rank) + " waited " +
                               std::to_string(timeout.count()) + " ms for ranks " + missing +
                               " to join a collective; they never arrived (crashed, or called a different "
                               "collective). The group is unusable; create a new one.");
        cv_.notify_all();
        return broken_;
      }
      if (round_ == round) return broken_;  // woken because another rank broke the group
    }
    if (!round_status_.isOk()) return round_status_;
    if (all.size() != result_.size()) {
      return invalidArgumentError("bootstrap allGather: output holds " + std::to_string(all.size()) + " bytes, " +
                                  std::to_string(result_.size()) + " needed (size x block)");
    }
    std::memcpy(all.data(), result_.data(), result_.size());
    return Status::ok();
  }

 private:
  void completeRound() {
    const std::size_t length = blocks_[0].size();
    round_status_ = Status::ok();
    for (int r = 1; r < size_; ++r) {
      if (blocks_[static_cast<std::size_t>(r)].size() != length) {
        round_status_ =
            mismatchError("bootstrap allGather: rank 0 sent " + std::to_string(length) + " bytes but rank " +
                          std::to_string(r) + " sent " + std::to_string(blocks_[static_cast<std::size_t>(r)].size()));
        break;
      }
    }
    result_.clear();
    if (round_status_.isOk()) {
      for (const auto& block : blocks_) result_.insert(result_.end(), block.begin(), block.end());
    }
    std::fill(arrived_.begin(), arrived_.end(), false);
    arrived_count_ = 0;
    ++round_;
  }

  const int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::vector<std::byte>> blocks_;
  std::vector<bool> arrived_;
  int arrived_count_ = 0;
  std::uint64_t round_ = 0;
  std::vector<std::byte> result_;
  Status round_status_;
  Status broken_;
};

class InProcessBootstrap final : public Bootstrap {
 public:
  InProcessBootstrap(int rank, int size, std::shared_ptr<Rendezvous> rendezvous)
      : rank_(rank), size_(size), rendezvous_(std::move(rendezvous)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override {
    return rendezvous_->allGather(rank_, mine, all, timeout);
  }

 private:
  int rank_;
  int size_;
  std::shared_ptr<Rendezvous> rendezvous_;
};

}  // namespace

StatusOr<std::vector<std::shared_ptr<Bootstrap>>> createInProcessGroup(int size) {
  if (size < 1 || size > kMaxWorldSize) {
    return invalidArgumentError("in-process group of " + std::to_string(size) + " ranks; supported sizes are 1.." +
                                std::to_string(kMaxWorldSize));
  }
  auto rendezvous = std::make_shared<Rendezvous>(size);
  std::vector<std::shared_ptr<Bootstrap>> group;
  for (int r = 0; r < size; ++r) group.push_back(std::make_shared<InProcessBootstrap>(r, size, rendezvous));
  return group;
}

}  // namespace peerreduce
