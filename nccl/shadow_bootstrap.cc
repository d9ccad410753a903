#include "nccl/shadow_bootstrap.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bootstrap/callback_bootstrap.h"
#include "nccl/nccl_values.h"

namespace peerreduce::nccl {
namespace {

// Polls of an unfinished all-gather start this short and double up to kMaxPollPause: a bootstrap
// collective of a few hundred bytes finishes in tens of microseconds once every rank is there, while a
// rank still preparing may take seconds.
constexpr std::chrono::microseconds kFirstPollPause{20};
constexpr std::chrono::microseconds kMaxPollPause{1000};
// What the callback returns when it failed; the channel's recorded Status replaces the callback
// bootstrap's message about the code.
constexpr int kChannelFailed = 1;

class ShadowChannel {
 public:
  ShadowChannel(int rank, int size, RealNccl& real, void* comm, std::shared_ptr<DeviceStaging> staging)
      : rank_(rank), size_(size), real_(real), comm_(comm), staging_(std::move(staging)) {}

  // The callback: every rank's `bytes` from `send` into `recv`.
  int allGather(const void* send, void* recv, std::size_t bytes, std::size_t* gathered, std::int64_t timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    Status status = gatherLengthsAndRecords(send, recv, bytes, deadline, timeout_ms);
    if (!status.isOk()) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::move(status);
      return kChannelFailed;
    }
    *gathered = bytes * static_cast<std::size_t>(size_);
    return 0;
  }

  // The failure the last callback recorded (ok when none), cleared.
  Status takeFailure() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(failure_, Status::ok());
  }

 private:
  Status gatherLengthsAndRecords(const void* send, void* recv, std::size_t bytes,
                                 std::chrono::steady_clock::time_point deadline, std::int64_t timeout_ms) {
    PR_RETURN_IF_ERROR(staging_->bindThread());
    const auto n = static_cast<std::size_t>(size_);
    const std::uint64_t mine = bytes;
    std::vector<std::uint64_t> lengths(n);
    PR_RETURN_IF_ERROR(gatherOnce(&mine, lengths.data(), sizeof(mine), deadline, timeout_ms, "record lengths"));
    for (std::size_t r = 0; r < n; ++r) {
      if (lengths[r] != mine) {
        return mismatchError("rank " + std::to_string(rank_) + " gathers records of " + std::to_string(mine) +
                             " bytes through the NCCL communicator, rank " + std::to_string(r) + " of " +
                             std::to_string(lengths[r]) + ": the ranks are at different steps of creation");
      }
    }
    return gatherOnce(send, recv, bytes, deadline, timeout_ms, "records");
  }

  Status gatherOnce(const void* send, void* recv, std::size_t bytes, std::chrono::steady_clock::time_point deadline,
                    std::int64_t timeout_ms, const char* what) {
    const std::size_t total = bytes * static_cast<std::size_t>(size_);
    PR_RETURN_IF_ERROR(staging_->reserve(bytes, total));
    PR_RETURN_IF_ERROR(staging_->upload(send, bytes));
    const int result = real_.allGather(staging_->sendBuffer(), staging_->recvBuffer(), bytes,
                                       static_cast<int>(NcclDataType::kUint8), comm_, staging_->stream());
    // A non-blocking communicator may answer ncclInProgress: the call is under way, waited for below.
    if (result != toInt(NcclResult::kSuccess) && result != toInt(NcclResult::kInProgress)) {
      return realFailure("ncclAllGather", result, what);
    }
    PR_RETURN_IF_ERROR(waitDone(deadline, timeout_ms, what));
    return staging_->download(recv, total);
  }

  Status waitDone(std::chrono::steady_clock::time_point deadline, std::int64_t timeout_ms, const char* what) {
    std::chrono::microseconds pause = kFirstPollPause;
    for (;;) {
      PR_ASSIGN_OR_RETURN(bool finished, staging_->done());
      if (finished) return Status::ok();
      int async = toInt(NcclResult::kSuccess);
      const int queried = real_.commGetAsyncError(comm_, &async);
      if (queried != toInt(NcclResult::kSuccess)) return realFailure("ncclCommGetAsyncError", queried, what);
      if (async != toInt(NcclResult::kSuccess) && async != toInt(NcclResult::kInProgress)) {
        return realFailure("the real communicator's asynchronous error", async, what);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return timeoutError("rank " + std::to_string(rank_) + ": the real NCCL all-gather of the bootstrap's " + what +
                            " did not finish within " + std::to_string(timeout_ms) +
                            " ms; another rank did not reach the same step of creating the communicator "
                            "(PEERREDUCE_BOOTSTRAP_TIMEOUT_MS bounds the wait)");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kMaxPollPause);
    }
  }

  Status realFailure(const char* call, int result, const char* what) {
    const char* text = real_.has(NcclFunction::kGetErrorString) ? real_.getErrorString(result) : nullptr;
    return remoteError("rank " + std::to_string(rank_) + ": " + call + " of the bootstrap's " + what + " failed with " +
                       std::to_string(result) + " (" + (text != nullptr ? text : "no text") + ") in the real NCCL " +
                       real_.describe());
  }

  int rank_;
  int size_;
  RealNccl& real_;
  void* comm_;
  std::shared_ptr<DeviceStaging> staging_;
  std::mutex mutex_;
  Status failure_;
};

class ShadowBootstrap final : public Bootstrap {
 public:
  ShadowBootstrap(std::shared_ptr<Bootstrap> framed, std::shared_ptr<ShadowChannel> channel)
      : framed_(std::move(framed)), channel_(std::move(channel)) {}

  int rank() const override { return framed_->rank(); }
  int size() const override { return framed_->size(); }

  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override {
    Status status = framed_->allGather(mine, all, timeout);
    Status precise = channel_->takeFailure();
    if (!status.isOk() && !precise.isOk()) return precise;
    return status;
  }

 private:
  std::shared_ptr<Bootstrap> framed_;
  std::shared_ptr<ShadowChannel> channel_;
};

}  // namespace

StatusOr<std::shared_ptr<Bootstrap>> createShadowBootstrap(int rank, int size, RealNccl& real, void* real_comm,
                                                           std::shared_ptr<DeviceStaging> staging) {
  if (staging == nullptr) return invalidArgumentError("the shadow bootstrap needs a staging buffer");
  auto channel = std::make_shared<ShadowChannel>(rank, size, real, real_comm, std::move(staging));
  BootstrapCallbacks callbacks;
  // The callback keeps the channel (and so the staging buffers) alive even if the callback bootstrap
  // abandons a call that overran its timeout.
  callbacks.all_gather = [channel](const void* send, void* recv, std::size_t bytes, std::size_t* gathered,
                                   std::int64_t timeout_ms) {
    return channel->allGather(send, recv, bytes, gathered, timeout_ms);
  };
  callbacks.name = "the shadow NCCL communicator";
  PR_ASSIGN_OR_RETURN(std::shared_ptr<Bootstrap> framed, createCallbackBootstrap(rank, size, std::move(callbacks)));
  return std::shared_ptr<Bootstrap>(std::make_shared<ShadowBootstrap>(std::move(framed), std::move(channel)));
}

}  // namespace peerreduce::nccl
