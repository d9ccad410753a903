// Every function libpeerreduce_nccl.so exports reaches the real NCCL (here the test double) with the
// application's arguments, on the real communicator of the application's, and comes back with the real
// function's own result, success or failure. PEERREDUCE_NCCL_TAKE=none: nothing is taken.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

std::uint64_t number(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

// A stream the double never looks at: only passed through.
cudaStream_t fakeStream() { return reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5150}); }

struct Forwarded {
  std::string function;
  // Calls the function once; its result.
  std::function<ncclResult_t()> call;
  // Checks the double's recording of that call.
  std::function<void(const NcclTestDoubleCall&)> check;
  // Whether a result forced on the double must come back (false for the two functions returning text).
  bool returns_result = true;
};

// The functions NCCL's API has that the library exports: its list, written out independently here.
const char* const kExported[] = {
    "ncclGetVersion",
    "ncclGetUniqueId",
    "ncclCommInitRank",
    "ncclCommInitRankConfig",
    "ncclCommInitAll",
    "ncclCommSplit",
    "ncclCommFinalize",
    "ncclCommDestroy",
    "ncclCommAbort",
    "ncclCommGetAsyncError",
    "ncclCommCount",
    "ncclCommCuDevice",
    "ncclCommUserRank",
    "ncclGetErrorString",
    "ncclGetLastError",
    "ncclAllReduce",
    "ncclReduceScatter",
    "ncclAllGather",
    "ncclBroadcast",
    "ncclReduce",
    "ncclSend",
    "ncclRecv",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclRedOpCreatePreMulSum",
    "ncclRedOpDestroy",
    "ncclMemAlloc",
    "ncclMemFree",
    "ncclCommRegister",
    "ncclCommDeregister",
    "ncclBcast",
    "ncclAlltoAll",
    "ncclGather",
    "ncclScatter",
    "ncclCommInitRankScalable",
    "ncclCommShrink",
    "ncclCommRevoke",
    "ncclGroupSimulateEnd",
    "ncclCommWindowRegister",
    "ncclCommWindowDeregister",
};

ncclComm_t oneRankComm() {
  ncclUniqueId id{};
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  return comm;
}

// A creation's result, after destroying what it made in *made (nothing when it failed). A pointer: the
// argument is read after the creation call it is passed with.
ncclResult_t destroyMade(ncclResult_t result, const ncclComm_t* made) {
  if (result == ncclSuccess) {
    EXPECT_EQ(ncclCommDestroy(*made), ncclSuccess);
  } else {
    EXPECT_EQ(*made, nullptr);
  }
  return result;
}

TEST(Api, EveryExportedFunctionForwardsItsArgumentsAndItsResult) {
  const ScopedEnv none("PEERREDUCE_NCCL_TAKE", "none");
  TestDouble& real = TestDouble::get();
  ncclComm_t comm = oneRankComm();
  ASSERT_NE(comm, nullptr);
  float send[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float recv[8] = {};
  int version = 0;
  int value = -1;
  ncclResult_t async = ncclInternalError;
  ncclUniqueId id{};
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  int devices[1] = {0};
  ncclComm_t made[1] = {nullptr};
  ncclComm_t split = nullptr;
  float scalar = 0.5f;
  ncclRedOp_t created = ncclSum;
  void* memory = nullptr;
  void* registration = nullptr;
  ncclWindow_t window = nullptr;
  const auto on_comm = [](const NcclTestDoubleCall& call) { EXPECT_EQ(call.comm_rank, 0); };
  ncclSimInfo_t sim_info = NCCL_SIM_INFO_INITIALIZER;

  std::vector<Forwarded> table = {
      {"ncclGetVersion", [&] { return ncclGetVersion(&version); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(&version));
         EXPECT_EQ(version, NCCL_VERSION_CODE);
       }},
      {"ncclGetUniqueId", [&] { return ncclGetUniqueId(&id); },
       [&](const NcclTestDoubleCall&) { EXPECT_EQ(std::string(id.internal, 6), "double"); }},
      {"ncclCommInitRank",
       [&] {
         ncclComm_t extra = nullptr;
         ncclUniqueId fresh{};
         EXPECT_EQ(ncclGetUniqueId(&fresh), ncclSuccess);
         return destroyMade(ncclCommInitRank(&extra, 1, fresh, 0), &extra);
       },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[1], 1u);  // nranks
         EXPECT_EQ(call.args[2], 0u);  // rank
       }},
      {"ncclCommInitRankConfig",
       [&] {
         ncclComm_t extra = nullptr;
         ncclUniqueId fresh{};
         EXPECT_EQ(ncclGetUniqueId(&fresh), ncclSuccess);
         const ncclResult_t result = ncclCommInitRankConfig(&extra, 1, fresh, 0, &config);
         if (result == ncclSuccess) {
           EXPECT_EQ(ncclCommDestroy(extra), ncclSuccess);
         }
         return result;
       },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[1], 1u);
         EXPECT_EQ(call.args[3], number(&config));
       }},
      {"ncclCommInitAll",
       [&] {
         const ncclResult_t result = ncclCommInitAll(made, 1, devices);
         if (result == ncclSuccess) {
           EXPECT_EQ(ncclCommDestroy(made[0]), ncclSuccess);
         }
         return result;
       },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[1], 1u);
         EXPECT_EQ(call.args[2], number(devices));
       }},
      {"ncclCommSplit",
       [&] {
         const ncclResult_t result = ncclCommSplit(comm, 3, 5, &split, nullptr);
         if (result == ncclSuccess) {
           EXPECT_NE(split, nullptr);
           EXPECT_EQ(ncclCommDestroy(split), ncclSuccess);
         }
         return result;
       },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], 3u);  // color
         EXPECT_EQ(call.args[1], 5u);  // key
         EXPECT_EQ(call.args[3], 0u);  // config
       }},
      {"ncclCommFinalize", [&] { return ncclCommFinalize(comm); }, on_comm},
      {"ncclCommDestroy", [&] { return ncclCommDestroy(oneRankComm()); }, on_comm},
      {"ncclCommAbort", [&] { return ncclCommAbort(oneRankComm()); }, on_comm},
      {"ncclCommGetAsyncError", [&] { return ncclCommGetAsyncError(comm, &async); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(async, ncclSuccess);
       }},
      {"ncclCommCount", [&] { return ncclCommCount(comm, &value); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(&value));
       }},
      {"ncclCommCuDevice", [&] { return ncclCommCuDevice(comm, &value); },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], number(&value)); }},
      {"ncclCommUserRank", [&] { return ncclCommUserRank(comm, &value); },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], number(&value)); }},
      {"ncclGetErrorString",
       [&] {
         EXPECT_STREQ(ncclGetErrorString(ncclRemoteError), kNcclTestDoubleErrorString);
         return ncclSuccess;
       },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], static_cast<std::uint64_t>(ncclRemoteError)); },
       false},
      {"ncclGetLastError",
       [&] {
         EXPECT_STREQ(ncclGetLastError(comm), kNcclTestDoubleLastError);
         return ncclSuccess;
       },
       on_comm, false},
      {"ncclAllReduce", [&] { return ncclAllReduce(send, recv, 7, ncclFloat32, ncclMax, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(send));
         EXPECT_EQ(call.args[1], number(recv));
         EXPECT_EQ(call.args[2], 7u);
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclFloat32));
         EXPECT_EQ(call.args[4], static_cast<std::uint64_t>(ncclMax));
         EXPECT_EQ(call.args[5], number(fakeStream()));
       }},
      {"ncclReduceScatter", [&] { return ncclReduceScatter(send, recv, 3, ncclInt32, ncclProd, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[2], 3u);
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclInt32));
         EXPECT_EQ(call.args[4], static_cast<std::uint64_t>(ncclProd));
         EXPECT_EQ(call.args[5], number(fakeStream()));
       }},
      {"ncclAllGather", [&] { return ncclAllGather(send, recv, 8, ncclFloat32, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(send));
         EXPECT_EQ(call.args[2], 8u);
         EXPECT_EQ(call.args[4], number(fakeStream()));
         EXPECT_EQ(recv[7], 8.0f);  // the double really gathers
       }},
      {"ncclBroadcast", [&] { return ncclBroadcast(send, recv, 5, ncclUint8, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[2], 5u);
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclUint8));
         EXPECT_EQ(call.args[4], 0u);
       }},
      {"ncclReduce", [&] { return ncclReduce(send, recv, 4, ncclFloat64, ncclMin, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclFloat64));
         EXPECT_EQ(call.args[4], static_cast<std::uint64_t>(ncclMin));
         EXPECT_EQ(call.args[5], 0u);
       }},
      {"ncclSend", [&] { return ncclSend(send, 2, ncclInt64, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(send));
         EXPECT_EQ(call.args[1], 2u);
         EXPECT_EQ(call.args[3], 0u);  // peer
       }},
      {"ncclRecv", [&] { return ncclRecv(recv, 2, ncclInt64, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(recv));
         EXPECT_EQ(call.args[4], number(fakeStream()));
       }},
      {"ncclGroupStart",
       [&] {
         const ncclResult_t result = ncclGroupStart();
         if (result == ncclSuccess) {
           EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
         }
         return result;
       },
       [](const NcclTestDoubleCall&) {}},
      {"ncclGroupEnd",
       [&] {
         EXPECT_EQ(ncclGroupStart(), ncclSuccess);
         return ncclGroupEnd();
       },
       [](const NcclTestDoubleCall&) {}},
      {"ncclRedOpCreatePreMulSum",
       [&] { return ncclRedOpCreatePreMulSum(&created, &scalar, ncclFloat32, ncclScalarHostImmediate, comm); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[1], number(&scalar));
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclScalarHostImmediate));
         EXPECT_GE(static_cast<int>(created), static_cast<int>(ncclNumOps));
       }},
      {"ncclRedOpDestroy", [&] { return ncclRedOpDestroy(created, comm); },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], static_cast<std::uint64_t>(created)); }},
      {"ncclMemAlloc", [&] { return ncclMemAlloc(&memory, 256); },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(&memory));
         EXPECT_EQ(call.args[1], 256u);
         std::free(memory);  // the double's block, from malloc
         memory = nullptr;
       }},
      {"ncclMemFree",
       [&] {
         void* block = nullptr;
         EXPECT_EQ(ncclMemAlloc(&block, 16), ncclSuccess);
         memory = block;
         return ncclMemFree(block);
       },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], number(memory)); }},
      {"ncclCommRegister", [&] { return ncclCommRegister(comm, recv, sizeof(recv), &registration); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(recv));
         EXPECT_EQ(call.args[1], sizeof(recv));
         EXPECT_EQ(call.args[2], number(&registration));
       }},
      {"ncclCommDeregister", [&] { return ncclCommDeregister(comm, registration); },
       [&](const NcclTestDoubleCall& call) { EXPECT_EQ(call.args[0], number(registration)); }},
      {"ncclBcast", [&] { return ncclBcast(recv, 6, ncclInt8, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(recv));
         EXPECT_EQ(call.args[1], 6u);
         EXPECT_EQ(call.args[2], static_cast<std::uint64_t>(ncclInt8));
         EXPECT_EQ(call.args[3], 0u);  // root
         EXPECT_EQ(call.args[4], number(fakeStream()));
       }},
      {"ncclAlltoAll", [&] { return ncclAlltoAll(send, recv, 4, ncclFloat32, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(send));
         EXPECT_EQ(call.args[1], number(recv));
         EXPECT_EQ(call.args[2], 4u);
         EXPECT_EQ(call.args[4], number(fakeStream()));
       }},
      {"ncclGather", [&] { return ncclGather(send, recv, 3, ncclInt32, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[2], 3u);
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(ncclInt32));
         EXPECT_EQ(call.args[4], 0u);  // root
       }},
      {"ncclScatter", [&] { return ncclScatter(send, recv, 2, ncclUint8, 0, comm, fakeStream()); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(send));
         EXPECT_EQ(call.args[2], 2u);
         EXPECT_EQ(call.args[5], number(fakeStream()));
       }},
      {"ncclCommInitRankScalable",
       [&] {
         ncclComm_t extra = nullptr;
         ncclUniqueId fresh[2] = {};
         EXPECT_EQ(ncclGetUniqueId(&fresh[0]), ncclSuccess);
         fresh[1] = fresh[0];
         return destroyMade(ncclCommInitRankScalable(&extra, 1, 0, 2, fresh, &config), &extra);
       },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[1], 1u);  // nranks
         EXPECT_EQ(call.args[2], 0u);  // myrank
         EXPECT_EQ(call.args[3], 2u);  // nId
         EXPECT_EQ(call.args[5], number(&config));
       }},
      {"ncclCommShrink",
       [&] {
         ncclComm_t shrunk = nullptr;
         const ncclResult_t result = ncclCommShrink(comm, nullptr, 0, &shrunk, nullptr, NCCL_SHRINK_DEFAULT);
         if (result == ncclSuccess) {
           EXPECT_NE(shrunk, nullptr);
           EXPECT_EQ(ncclCommDestroy(shrunk), ncclSuccess);
         }
         return result;
       },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[1], 0u);  // excludeRanksCount
         EXPECT_EQ(call.args[5], static_cast<std::uint64_t>(NCCL_SHRINK_DEFAULT));
       }},
      {"ncclCommRevoke",
       [&] {
         ncclComm_t revoked = oneRankComm();
         const ncclResult_t result = ncclCommRevoke(revoked, NCCL_REVOKE_DEFAULT);
         EXPECT_EQ(ncclCommDestroy(revoked), ncclSuccess);
         return result;
       },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], static_cast<std::uint64_t>(NCCL_REVOKE_DEFAULT));
       }},
      {"ncclGroupSimulateEnd",
       [&] {
         EXPECT_EQ(ncclGroupStart(), ncclSuccess);
         return ncclGroupSimulateEnd(&sim_info);
       },
       [&](const NcclTestDoubleCall& call) {
         EXPECT_EQ(call.args[0], number(&sim_info));
         EXPECT_EQ(sim_info.estimatedTime, 1.0f);
       }},
      {"ncclCommWindowRegister",
       [&] { return ncclCommWindowRegister(comm, recv, sizeof(recv), &window, NCCL_WIN_COLL_SYMMETRIC); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(recv));
         EXPECT_EQ(call.args[1], sizeof(recv));
         EXPECT_EQ(call.args[2], number(&window));
         EXPECT_EQ(call.args[3], static_cast<std::uint64_t>(NCCL_WIN_COLL_SYMMETRIC));
         EXPECT_EQ(number(window), number(recv)) << "the real NCCL's window comes back";
       }},
      {"ncclCommWindowDeregister", [&] { return ncclCommWindowDeregister(comm, window); },
       [&](const NcclTestDoubleCall& call) {
         on_comm(call);
         EXPECT_EQ(call.args[0], number(window));
       }},
  };

  int forwarded = 0;
  for (const Forwarded& row : table) {
    SCOPED_TRACE(row.function);
    real.reset();
    EXPECT_EQ(row.call(), ncclSuccess) << ncclGetLastError(comm);
    const auto calls = real.callsOf(row.function);
    ASSERT_FALSE(calls.empty()) << row.function << " did not reach the real NCCL";
    const int failures_before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    row.check(calls.back());
    if (row.returns_result) {
      // A failure of the real function comes back as it is, and its message is the real library's.
      real.setResult(row.function, ncclRemoteError);
      EXPECT_EQ(row.call(), ncclRemoteError);
      EXPECT_STREQ(ncclGetLastError(comm), kNcclTestDoubleLastError);
      real.setResult(row.function, ncclSuccess);
    }
    if (::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() == failures_before) {
      ++forwarded;
    }
  }
  real.reset();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  // Every exported name is in the table and the table holds nothing else.
  EXPECT_EQ(table.size(), std::size(kExported));
  for (const char* name : kExported) {
    EXPECT_TRUE(std::any_of(table.begin(), table.end(), [&](const Forwarded& row) { return row.function == name; }))
        << name;
  }
  std::printf("forwarded %d of %zu exported functions with their arguments and results\n", forwarded,
              std::size(kExported));
  EXPECT_EQ(forwarded, static_cast<int>(std::size(kExported)));
}

// The p-prefixed names are the same functions.
TEST(Api, ProfilingNamesAreTheSameFunctions) {
  void* self = dlopen(PEERREDUCE_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(self, nullptr) << dlerror();
  for (const char* name : kExported) {
    void* plain = dlsym(self, name);
    void* profiling = dlsym(self, (std::string("p") + name).c_str());
    EXPECT_NE(plain, nullptr) << name;
    EXPECT_EQ(plain, profiling) << name;
  }
  dlclose(self);
}

}  // namespace
}  // namespace peerreduce::nccl::testing
