// Loading the real NCCL through libpeerreduce_nccl.so as an application does: a library that is missing, one
// that is not NCCL, or this library itself gives a typed error at the first call, the same at every later
// call, with its message in ncclGetLastError, and never a crash. The library loads NCCL once per process,
// so each case runs in a process of its own (a death test that sets PEERREDUCE_NCCL_LIB first).
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "text_contains.h"

namespace {

using peerreduce::testing::contains;

// In the child: the first call and a later one fail with `expected`, the message says `says`, and the
// functions that need no NCCL still answer. Exits 0 when all of that holds, else prints what did not.
void expectLoadFailure(const char* library, ncclResult_t expected, const std::string& says) {
  ::setenv("PEERREDUCE_NCCL_LIB", library, 1);
  int version = 0;
  const ncclResult_t first = ncclGetVersion(&version);
  const std::string message = ncclGetLastError(nullptr);
  ncclUniqueId id{};
  const ncclResult_t later = ncclGetUniqueId(&id);
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(&id);
  const ncclResult_t init = ncclCommInitRank(&comm, 1, id, 0);
  const std::string error_string = ncclGetErrorString(expected);
  bool ok = true;
  const auto check = [&ok](bool condition, const std::string& what) {
    if (!condition) {
      std::fprintf(stderr, "FAILED: %s\n", what.c_str());
      ok = false;
    }
  };
  check(first == expected, "ncclGetVersion gave " + std::to_string(first));
  check(later == expected, "ncclGetUniqueId gave " + std::to_string(later));
  check(init == expected, "ncclCommInitRank gave " + std::to_string(init));
  check(comm == nullptr, "ncclCommInitRank left a communicator");
  check(contains(message, says), "the message '" + message + "' lacks '" + says + "'");
  check(contains(message, "PEERREDUCE_NCCL_LIB"), "the message '" + message + "' does not name the setting");
  check(!error_string.empty(), "ncclGetErrorString gave nothing without NCCL");
  std::fprintf(stderr, "%s: %s\n", ok ? "as expected" : "not as expected", message.c_str());
  std::exit(ok ? 0 : 1);
}

class Loading : public ::testing::Test {
 protected:
  void SetUp() override { ::testing::FLAGS_gtest_death_test_style = "threadsafe"; }
};

TEST_F(Loading, MissingLibraryIsASystemErrorNamingIt) {
  EXPECT_EXIT(expectLoadFailure("/nonexistent/libnccl.so.2", ncclSystemError, "/nonexistent/libnccl.so.2"),
              ::testing::ExitedWithCode(0), "as expected");
}

TEST_F(Loading, LibraryWithoutAnNcclFunctionIsNotNccl) {
  EXPECT_EXIT(expectLoadFailure(NCCL_TEST_DOUBLE_INCOMPLETE_PATH, ncclInvalidArgument, "it lacks ncclAllReduce"),
              ::testing::ExitedWithCode(0), "as expected");
}

TEST_F(Loading, ThisLibraryItselfIsRefused) {
  EXPECT_EXIT(expectLoadFailure(PEERREDUCE_NCCL_LIBRARY_PATH, ncclInvalidArgument, "is libpeerreduce_nccl itself"),
              ::testing::ExitedWithCode(0), "as expected");
}

// An NCCL older than one of the functions loads; calling that function is ncclInvalidUsage naming it and the
// release that added it, and the others still forward.
TEST_F(Loading, OlderNcclRefusesOnlyTheFunctionItLacks) {
  EXPECT_EXIT(
      {
        ::setenv("PEERREDUCE_NCCL_LIB", NCCL_TEST_DOUBLE_WITHOUT_SPLIT_PATH, 1);
        ::setenv("PEERREDUCE_NCCL_TAKE", "none", 1);
        ncclUniqueId id{};
        ncclComm_t comm = nullptr;
        ncclComm_t split = nullptr;
        const bool made = ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess;
        const ncclResult_t result = made ? ncclCommSplit(comm, 0, 0, &split, nullptr) : ncclInternalError;
        const std::string message = ncclGetLastError(comm);
        const bool others = made && ncclCommDestroy(comm) == ncclSuccess;
        std::fprintf(stderr, "split %d: %s\n", static_cast<int>(result), message.c_str());
        std::exit(result == ncclInvalidUsage && split == nullptr && others &&
                          contains(message, "has no ncclCommSplit, which NCCL 2.18 added")
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "split 5");
}

// The control: the same steps with the test double load it and succeed.
TEST_F(Loading, TheTestDoubleLoads) {
  EXPECT_EXIT(
      {
        ::setenv("PEERREDUCE_NCCL_LIB", NCCL_TEST_DOUBLE_PATH, 1);
        int version = 0;
        const ncclResult_t result = ncclGetVersion(&version);
        std::fprintf(stderr, "version %d result %d\n", version, static_cast<int>(result));
        std::exit(result == ncclSuccess && version == NCCL_VERSION_CODE ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "version");
}

}  // namespace
