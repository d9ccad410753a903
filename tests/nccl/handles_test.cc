// The handle the application holds is the real NCCL's communicator: a function of NCCL's API this library
// does not export (the device API) reaches the real NCCL with it and works; a handle this library has no
// state for goes to the real NCCL untouched, for it to serve or refuse; and a call the real NCCL makes to
// one of its own exported functions (which resolves to this library's) goes straight back to the real
// function.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

std::uint64_t handleNumber(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

// The real NCCL's own function `name`, as the dynamic linker binds a function this library does not export.
template <typename Function>
Function* realFunction(const char* name) {
  (void)TestDouble::get();  // loads the real NCCL
  void* library = dlopen(NCCL_TEST_DOUBLE_PATH, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(library, nullptr) << dlerror();
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  EXPECT_NE(symbol, nullptr) << name;
  if (library != nullptr) dlclose(library);
  return reinterpret_cast<Function*>(symbol);
}

// The double has no device API (ncclDevCommCreate needs a GPU's device communicator), so the windows stand
// in for it here, called in the real NCCL directly as the dynamic linker binds a function this library
// does not export (the library's own window functions only forward: forwarding_test.cc).
TEST(Api, AFunctionThisLibraryDoesNotExportGetsTheRealHandle) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  void* self = dlopen(PEERREDUCE_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(self, nullptr) << dlerror();
  EXPECT_EQ(dlsym(self, "ncclDevCommCreate"), nullptr) << "left to the real NCCL";
  dlclose(self);
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  auto* window_register = realFunction<decltype(ncclCommWindowRegister)>("ncclCommWindowRegister");
  auto* window_deregister = realFunction<decltype(ncclCommWindowDeregister)>("ncclCommWindowDeregister");
  ASSERT_NE(window_register, nullptr);
  ASSERT_NE(window_deregister, nullptr);
  TestDouble& real = TestDouble::get();
  real.reset();
  float buffer[16] = {};
  for (int rank = 0; rank < 2; ++rank) {
    ncclComm_t comm = comms[static_cast<std::size_t>(rank)];
    ncclWindow_t window = nullptr;
    EXPECT_EQ(window_register(comm, buffer, sizeof(buffer), &window, NCCL_WIN_DEFAULT), ncclSuccess);
    EXPECT_EQ(window_deregister(comm, window), ncclSuccess);
    const auto calls = real.callsOf("ncclCommWindowRegister", rank);
    ASSERT_EQ(calls.size(), 1u) << "the real NCCL knows the handle as its communicator of rank " << rank;
    EXPECT_EQ(calls[0].args[0], handleNumber(buffer));
    EXPECT_EQ(real.callsOf("ncclCommWindowDeregister", rank).size(), 1u);
  }
  // The same handles still carry peerreduce's side.
  expectTakenSums(comms);
  destroyComms(comms);
}

TEST(Api, HandlesThisLibraryHasNoStateForGoToTheRealNcclUntouched) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  TestDouble& real = TestDouble::get();
  real.reset();
  float value = 0;
  auto* foreign = reinterpret_cast<ncclComm_t>(&value);
  // The real NCCL refuses what is not its communicator; this library neither reads nor takes it.
  EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, foreign, nullptr), ncclInvalidArgument);
  auto calls = real.callsOf("ncclAllReduce");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].comm_rank, kNcclTestDoubleUnknownComm);
  EXPECT_STREQ(ncclGetLastError(nullptr), kNcclTestDoubleLastError) << "the real library's message";
  EXPECT_EQ(ncclCommCount(nullptr, nullptr), ncclInvalidArgument);
  EXPECT_EQ(real.callsOf("ncclCommCount").size(), 1u);
  auto comms = makeComms(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_EQ(ncclCommDestroy(comms[0]), ncclSuccess);
  real.reset();
  EXPECT_EQ(ncclCommDestroy(comms[0]), ncclInvalidArgument) << "a second destroy, refused by the real NCCL";
  EXPECT_EQ(real.callsOf("ncclCommDestroy").size(), 1u);
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidArgument)
      << "inside a group too";
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  calls = real.callsOf("ncclAllReduce");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].comm_rank, kNcclTestDoubleUnknownComm);
}

// A communicator the real NCCL made without this library (here through the real ncclCommInitRank, as a
// function this library does not wrap would) is NCCL's alone: every call of it is forwarded, in take=all
// mode too, and a group holding one of its calls is forwarded whole.
TEST(Api, ACommunicatorMadeOnlyByTheRealNcclIsForwarded) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto* real_init = realFunction<decltype(ncclCommInitRank)>("ncclCommInitRank");
  auto* real_destroy = realFunction<decltype(ncclCommDestroy)>("ncclCommDestroy");
  ASSERT_NE(real_init, nullptr);
  ASSERT_NE(real_destroy, nullptr);
  auto ours = makeComms(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t nccls = nullptr;
  ASSERT_EQ(real_init(&nccls, 1, id, 0), ncclSuccess);
  TestDouble& real = TestDouble::get();
  real.reset();
  float a[4] = {1, 2, 3, 4};
  float b[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(a, a, 4, ncclFloat32, ncclSum, nccls, nullptr), ncclSuccess);
  ASSERT_EQ(real.callsOf("ncclAllReduce").size(), 1u);
  EXPECT_EQ(real.callsOf("ncclAllReduce")[0].comm_rank, 0);
  real.reset();
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(b, b, 4, ncclFloat32, ncclSum, ours[0], nullptr), ncclSuccess);  // kept
  EXPECT_EQ(ncclAllReduce(a, a, 4, ncclFloat32, ncclSum, nccls, nullptr), ncclSuccess);    // mixes the group
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  const auto calls = real.callsOf("ncclAllReduce");
  ASSERT_EQ(calls.size(), 2u) << "the group forwarded whole, in order";
  EXPECT_EQ(calls[0].args[0], handleNumber(b));
  EXPECT_EQ(calls[1].args[0], handleNumber(a));
  EXPECT_EQ(real_destroy(nccls), ncclSuccess);
  destroyComms(ours);
}

// The double's ncclCommSplit gathers colors and keys with ncclAllGather through the symbol table, which
// finds this library's: the call comes from inside the real NCCL, so it must reach the real ncclAllGather
// unchanged, on the parent's real communicator, though in take=all mode this library would take an int32
// all-gather of that communicator.
TEST(Api, ACallTheRealNcclMakesToItsOwnExportGoesStraightToIt) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  std::vector<ncclComm_t> halves(2, nullptr);
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(ncclCommSplit(comms[r], 0, rank, &halves[r], nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  });
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    std::vector<NcclTestDoubleCall> mine;
    for (const NcclTestDoubleCall& call : real.calls()) {
      if (call.comm_rank == rank) mine.push_back(call);
    }
    std::size_t split = mine.size();
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (std::string(mine[i].function) == "ncclCommSplit") split = i;
    }
    ASSERT_LT(split + 1, mine.size()) << "the split was forwarded";
    // The next call the real NCCL received on this rank is the split's own all-gather, unchanged.
    EXPECT_STREQ(mine[split + 1].function, "ncclAllGather");
    EXPECT_EQ(mine[split + 1].args[2], 2u);  // sendcount: color and key
    EXPECT_EQ(mine[split + 1].args[3], static_cast<std::uint64_t>(ncclInt32));
  }
  expectTakenSums(halves);
  destroyComms(halves);
  destroyComms(comms);
}

// PyTorch's watchdog aborts a communicator from its own thread while a collective of it hangs: the hung
// call (here rank 0's allreduce, which rank 1 never joins) returns promptly with an error, well before
// its timeout. (The call holds the communicator's state until it returns, comm_table.h; this path reads
// nothing of it after the wait, so the test would pass without that hold too.)
TEST(Api, AbortFromAnotherThreadEndsAHungTakenCall) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", "20000");
  std::vector<float> data(64, 1.0f);
  ncclResult_t hung = ncclSuccess;
  std::atomic<bool> returned{false};
  const auto started = std::chrono::steady_clock::now();
  std::thread caller([&] {
    hung = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comms[0], nullptr);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "the allreduce waits for rank 1";
  EXPECT_EQ(ncclCommAbort(comms[0]), ncclSuccess);
  caller.join();
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_NE(hung, ncclSuccess);
  EXPECT_LT(waited, std::chrono::seconds(10)) << "ended by the abort, not by the 20 s timeout";
  EXPECT_EQ(ncclCommAbort(comms[1]), ncclSuccess);
}

}  // namespace
}  // namespace peerreduce::nccl::testing
