// The main of the tests of libpeerreduce_nccl.so: every test runs against the test double
// (PEERREDUCE_NCCL_LIB) with peerreduce's side on a simulated world (PEERREDUCE_NCCL_SIMULATE), set before
// the first NCCL call since the library loads NCCL once per process. Also the shared helpers.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "nccl_api_support.h"

namespace peerreduce::nccl::testing {

TestDouble::TestDouble() {
  // Already loaded by libpeerreduce_nccl.so (RTLD_NOLOAD): the same copy, so the same recordings.
  (void)ncclGetVersion(nullptr);
  void* handle = dlopen(NCCL_TEST_DOUBLE_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) throw std::runtime_error(std::string("the test double is not loaded: ") + dlerror());
  reset_ = reinterpret_cast<void (*)()>(dlsym(handle, "ncclTestDoubleReset"));
  set_result_ = reinterpret_cast<void (*)(const char*, int)>(dlsym(handle, "ncclTestDoubleSetResult"));
  set_async_error_ = reinterpret_cast<void (*)(int)>(dlsym(handle, "ncclTestDoubleSetAsyncError"));
  count_ = reinterpret_cast<size_t (*)()>(dlsym(handle, "ncclTestDoubleCallCount"));
  call_at_ = reinterpret_cast<int (*)(size_t, NcclTestDoubleCall*)>(dlsym(handle, "ncclTestDoubleCallAt"));
  if (reset_ == nullptr || set_result_ == nullptr || set_async_error_ == nullptr || count_ == nullptr ||
      call_at_ == nullptr) {
    throw std::runtime_error("the test double lacks its own functions");
  }
}

TestDouble& TestDouble::get() {
  static TestDouble instance;
  return instance;
}

std::vector<NcclTestDoubleCall> TestDouble::calls() const {
  std::vector<NcclTestDoubleCall> all;
  NcclTestDoubleCall call{};
  for (size_t i = 0; call_at_(i, &call) != 0; ++i) all.push_back(call);
  return all;
}

std::vector<NcclTestDoubleCall> TestDouble::callsOf(const std::string& function, int rank) const {
  std::vector<NcclTestDoubleCall> matching;
  for (const NcclTestDoubleCall& call : calls()) {
    if (function == call.function && (rank == -2 || call.comm_rank == rank)) matching.push_back(call);
  }
  return matching;
}

void onRanks(int nranks, const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) threads.emplace_back(body, r);
  for (auto& thread : threads) thread.join();
}

std::vector<ncclComm_t> makeComms(int nranks) {
  ncclUniqueId id{};
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(nranks), nullptr);
  std::vector<ncclResult_t> results(static_cast<std::size_t>(nranks), ncclSuccess);
  onRanks(nranks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    results[r] = ncclCommInitRank(&comms[r], nranks, id, rank);
  });
  for (int r = 0; r < nranks; ++r) {
    EXPECT_EQ(results[static_cast<std::size_t>(r)], ncclSuccess) << "rank " << r << ": " << ncclGetLastError(nullptr);
  }
  return comms;
}

// An allreduce of each rank's rank + 1 on every communicator, one thread per rank: taken (nothing reaches
// the double) and right.
void expectTakenSums(const std::vector<ncclComm_t>& comms) {
  TestDouble::get().reset();
  const int n = static_cast<int>(comms.size());
  std::vector<std::vector<double>> results(comms.size());
  onRanks(n, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    int comm_rank = -1;
    EXPECT_EQ(ncclCommUserRank(comms[r], &comm_rank), ncclSuccess);
    results[r].assign(100, static_cast<double>(comm_rank + 1));
    EXPECT_EQ(ncclAllReduce(results[r].data(), results[r].data(), 100, ncclFloat64, ncclSum, comms[r], nullptr),
              ncclSuccess)
        << ncclGetLastError(comms[r]);
  });
  for (const auto& result : results) {
    for (double value : result) ASSERT_EQ(value, n * (n + 1) / 2.0);
  }
  EXPECT_TRUE(TestDouble::get().callsOf("ncclAllReduce").empty());
}

void destroyComms(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t comm : comms) {
    if (comm != nullptr) {
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    }
  }
}

}  // namespace peerreduce::nccl::testing

int main(int argc, char** argv) {
  // Overwrite: these tests are about the double and the simulator, whatever the caller's environment says.
  ::setenv("PEERREDUCE_NCCL_LIB", NCCL_TEST_DOUBLE_PATH, 1);
  ::setenv("PEERREDUCE_NCCL_SIMULATE", "1", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
