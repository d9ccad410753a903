// CallbackBootstrap: see callback_bootstrap.h.
#include "bootstrap/callback_bootstrap.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce {
namespace {

// A callback told to give up after `timeout` gets this much longer before it is abandoned, so one that
// honours its timeout reports its own error instead of racing with ours.
constexpr std::chrono::milliseconds kCallbackGrace{250};

// What one call shares with the thread that runs the callback: a callback that returns late writes here
// and nowhere else.
struct CallState {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  int result = 0;
  std::size_t gathered = 0;
  std::vector<std::byte> send;
  std::vector<std::byte> recv;
};

class CallbackBootstrap final : public Bootstrap {
 public:
  CallbackBootstrap(int rank, int size, BootstrapCallbacks callbacks)
      : rank_(rank), size_(size), callbacks_(std::move(callbacks)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override {
    if (!broken_.isOk()) return broken_;
    const std::size_t n = static_cast<std::size_t>(size_);
    if (all.size() != mine.size() * n) {
      return invalidArgumentError(who() + ": allGather output holds " + std::to_string(all.size()) + " bytes, " +
                                  std::to_string(mine.size() * n) + " needed");
    }
    if (mine.size() > kMaxFramePayload) {
      return invalidArgumentError(who() + ": allGather block of " + std::to_string(mine.size()) +
                                  " bytes is larger than the " + std::to_string(kMaxFramePayload) + " a frame carries");
    }
    const std::uint64_t sequence = sequence_++;
    const std::size_t frame = sizeof(CallbackFrameHeader) + mine.size();
    auto state = std::make_shared<CallState>();
    state->send.resize(frame);
    state->recv.resize(frame * n);
    const CallbackFrameHeader header{kCallbackFrameMagic, static_cast<std::uint32_t>(rank_),
                                     static_cast<std::uint32_t>(size_), static_cast<std::uint32_t>(mine.size()),
                                     sequence};
    std::memcpy(state->send.data(), &header, sizeof(header));
    if (!mine.empty()) std::memcpy(state->send.data() + sizeof(header), mine.data(), mine.size());
    auto gather = callbacks_.all_gather;
    const std::int64_t timeout_ms = timeout.count();
    PR_RETURN_IF_ERROR(runBounded(
        state,
        [gather, timeout_ms](CallState& s) {
          return gather(s.send.data(), s.recv.data(), s.send.size(), &s.gathered, timeout_ms);
        },
        timeout, "all_gather"));
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->result != 0) {
      return unavailableError(who() + ": the all_gather callback failed with code " + std::to_string(state->result) +
                              " (collective " + std::to_string(sequence) + ")");
    }
    if (state->gathered != frame * n) {
      return corruptError(who() + ": the all_gather callback delivered " + std::to_string(state->gathered) +
                          " bytes for " + std::to_string(n) + " ranks of " + std::to_string(frame) + "-byte blocks (" +
                          std::to_string(frame * n) + " expected); it must return every rank's block, in rank order");
    }
    for (std::size_t r = 0; r < n; ++r) {
      const std::byte* block = state->recv.data() + r * frame;
      CallbackFrameHeader theirs{};
      std::memcpy(&theirs, block, sizeof(theirs));
      PR_RETURN_IF_ERROR(checkFrame(theirs, static_cast<int>(r), mine.size(), sequence));
      if (!mine.empty()) std::memcpy(all.data() + r * mine.size(), block + sizeof(theirs), mine.size());
    }
    return Status::ok();
  }

  Status barrier(std::chrono::milliseconds timeout) override {
    if (!callbacks_.barrier) return Bootstrap::barrier(timeout);
    if (!broken_.isOk()) return broken_;
    auto state = std::make_shared<CallState>();
    auto barrier = callbacks_.barrier;
    const std::int64_t timeout_ms = timeout.count();
    PR_RETURN_IF_ERROR(runBounded(
        state, [barrier, timeout_ms](CallState&) { return barrier(timeout_ms); }, timeout, "barrier"));
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->result != 0) {
      return unavailableError(who() + ": the barrier callback failed with code " + std::to_string(state->result));
    }
    return Status::ok();
  }

 private:
  // Frames are bounded so their length field and the gathered size cannot overflow.
  static constexpr std::size_t kMaxFramePayload = std::size_t{1} << 30;

  std::string who() const { return "rank " + std::to_string(rank_) + " (" + callbacks_.name + ")"; }

  Status checkFrame(const CallbackFrameHeader& theirs, int r, std::size_t length, std::uint64_t sequence) const {
    const std::string slot = who() + ": block " + std::to_string(r) + " of the all_gather callback ";
    if (theirs.magic != kCallbackFrameMagic) {
      return corruptError(slot +
                          "is not a peerreduce frame (the callback wrote something else, or blocks are "
                          "shifted: it must place rank r's block at r x the block size)");
    }
    if (theirs.world_size != static_cast<std::uint32_t>(size_)) {
      return mismatchError(slot + "comes from a rank of a world of " + std::to_string(theirs.world_size) +
                           " ranks; this rank was created with " + std::to_string(size_) +
                           ": every rank must pass the same nranks");
    }
    if (theirs.rank != static_cast<std::uint32_t>(r)) {
      return corruptError(slot + "holds rank " + std::to_string(theirs.rank) +
                          "'s block; blocks must be in rank order");
    }
    if (theirs.sequence != sequence) {
      return mismatchError(slot + "belongs to collective " + std::to_string(theirs.sequence) + " of rank " +
                           std::to_string(r) + ", this rank is at collective " + std::to_string(sequence) +
                           ": ranks called different collectives");
    }
    if (theirs.length != length) {
      return mismatchError(slot + "carries " + std::to_string(theirs.length) + " bytes, this rank " +
                           std::to_string(length) + ": ranks passed blocks of different lengths");
    }
    return Status::ok();
  }

  // Runs `body` on a thread of its own and waits for it, bounded by `timeout` (plus a grace). A callback
  // that does not return in time is abandoned (its thread detached; it may only write `state`) and
  // leaves the bootstrap broken.
  template <typename Body>
  Status runBounded(const std::shared_ptr<CallState>& state, Body body, std::chrono::milliseconds timeout,
                    const char* callback) {
    std::thread worker;
    try {
      worker = std::thread([state, body]() mutable {
        const int result = body(*state);
        std::lock_guard<std::mutex> lock(state->mutex);
        state->result = result;
        state->done = true;
        state->cv.notify_all();
      });
    } catch (const std::system_error& e) {
      return unavailableError(who() + ": cannot start a thread for the " + callback + " callback (" + e.what() + ")");
    }
    bool done = false;
    {
      std::unique_lock<std::mutex> lock(state->mutex);
      done = state->cv.wait_for(lock, timeout + kCallbackGrace, [&] { return state->done; });
    }
    if (done) {
      worker.join();
      return Status::ok();
    }
    worker.detach();
    broken_ = timeoutError(who() + ": the " + std::string(callback) + " callback did not return within " +
                           std::to_string(timeout.count()) +
                           " ms (the bootstrap's timeout); the bootstrap is unusable. Make the callback honour its "
                           "timeout_ms, or raise PEERREDUCE_BOOTSTRAP_TIMEOUT_MS if the rendezvous is slow");
    return broken_;
  }

  const int rank_;
  const int size_;
  const BootstrapCallbacks callbacks_;
  std::uint64_t sequence_ = 0;
  Status broken_;
};

}  // namespace

StatusOr<std::shared_ptr<Bootstrap>> createCallbackBootstrap(int rank, int size, BootstrapCallbacks callbacks) {
  if (size < 1 || size > kMaxWorldSize) {
    return invalidArgumentError("callback bootstrap: world size " + std::to_string(size) + " is outside 1.." +
                                std::to_string(kMaxWorldSize));
  }
  if (rank < 0 || rank >= size) {
    return invalidArgumentError("callback bootstrap: rank " + std::to_string(rank) + " is outside 0.." +
                                std::to_string(size - 1));
  }
  if (!callbacks.all_gather) {
    return invalidArgumentError("callback bootstrap of rank " + std::to_string(rank) +
                                ": the all_gather callback is missing (it is required; barrier is optional)");
  }
  return std::shared_ptr<Bootstrap>(std::make_shared<CallbackBootstrap>(rank, size, std::move(callbacks)));
}

}  // namespace peerreduce
