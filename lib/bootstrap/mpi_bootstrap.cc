#include "peerreduce/mpi_bootstrap.h"

#include <chrono>
#include <string>
#include <thread>

#include "peerreduce/types.h"

namespace peerreduce {
namespace {

// Polling interval of a pending collective: short against a bootstrap's typical milliseconds.
constexpr auto kPollInterval = std::chrono::microseconds(50);

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  ~MpiBootstrap() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL && broken_.isOk()) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override {
    if (!broken_.isOk()) return broken_;
    if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
      return invalidArgumentError("MPI bootstrap allGather: output holds " + std::to_string(all.size()) + " bytes, " +
                                  std::to_string(mine.size() * static_cast<std::size_t>(size_)) + " needed");
    }
    // Every rank must send the same length: agree on it first, so a mismatch is an error, not a crash.
    long long length = static_cast<long long>(mine.size());
    long long lengths[2] = {length, -length};
    long long extremes[2] = {0, 0};
    MPI_Request request;
    int rc = MPI_Iallreduce(lengths, extremes, 2, MPI_LONG_LONG, MPI_MAX, comm_, &request);
    PR_RETURN_IF_ERROR(check(rc, "MPI_Iallreduce"));
    PR_RETURN_IF_ERROR(wait(request, timeout, "agreeing on the block length"));
    if (extremes[0] != length || -extremes[1] != length) {
      return mismatchError("MPI bootstrap allGather: ranks pass blocks of different lengths (" +
                           std::to_string(-extremes[1]) + ".." + std::to_string(extremes[0]) + " bytes)");
    }
    rc = MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                        MPI_BYTE, comm_, &request);
    PR_RETURN_IF_ERROR(check(rc, "MPI_Iallgather"));
    return wait(request, timeout, "gathering blocks");
  }

 private:
  Status check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return Status::ok();
    return unavailableError(std::string(call) + " failed on rank " + std::to_string(rank_) + ": " + mpiErrorText(rc));
  }

  // Polls `request` until it completes or `timeout` passes (bounded by the deadline).
  Status wait(MPI_Request& request, std::chrono::milliseconds timeout, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int done = 0;
      PR_RETURN_IF_ERROR(check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test"));
      if (done) return Status::ok();
      if (std::chrono::steady_clock::now() > deadline) {
        broken_ =
            timeoutError("MPI bootstrap on rank " + std::to_string(rank_) + ": " + what + " took longer than " +
                         std::to_string(timeout.count()) +
                         " ms; some rank never joined the collective. The bootstrap is unusable; create a new one.");
        return broken_;
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  Status broken_;
};

}  // namespace

StatusOr<std::shared_ptr<Bootstrap>> createMpiBootstrap(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return invalidArgumentError("createMpiBootstrap: MPI is not initialised (call MPI_Init first)");
  if (comm == MPI_COMM_NULL) return invalidArgumentError("createMpiBootstrap: the communicator is MPI_COMM_NULL");
  int size = 0;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size < 1 || size > kMaxWorldSize) {
    return invalidArgumentError("createMpiBootstrap: " + std::to_string(size) + " processes; peerreduce supports 1.." +
                                std::to_string(kMaxWorldSize));
  }
  MPI_Comm dup = MPI_COMM_NULL;
  const int rc = MPI_Comm_dup(comm, &dup);
  if (rc != MPI_SUCCESS)
    return unavailableError("MPI_Comm_dup failed on rank " + std::to_string(rank) + ": " + mpiErrorText(rc));
  return std::shared_ptr<Bootstrap>(std::make_shared<MpiBootstrap>(dup, rank, size));
}

}  // namespace peerreduce
