// A program that loads NCCL by path and looks each function up in that library alone, as vLLM's pynccl does
// (VLLM_NCCL_SO_PATH names the file, ctypes loads it RTLD_LOCAL and finds every function by name on its
// handle), never sees LD_PRELOAD. Pointed at libpeerreduce_nccl.so instead, it must find every function it
// looks up in this library itself: a lookup on the handle reaches the library and its own dependencies
// only, never the real NCCL, which the library loads privately. This binary is not linked with the
// library, as such a program is not.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// The functions vLLM's pynccl wrapper looks up (vllm/distributed/device_communicators/pynccl_wrapper.py,
// NCCLLibrary.exported_functions): a list of NCCL API names, written out here. pynccl fails to load a
// library lacking any of these (ncclCommWindowRegister and ncclCommWindowDeregister it tolerates missing
// on ROCm only). Older vLLM releases look up a subset. It also looks up ncclCommQueryProperties,
// ncclCommSuspend and ncclCommResume, which NCCL 2.29 added and which it skips when missing: this library
// implements NCCL 2.28's API, so vLLM runs without them (docs/NCCL.md, "vLLM").
const char* const kPyncclFunctions[] = {
    "ncclGetErrorString",
    "ncclGetVersion",
    "ncclGetUniqueId",
    "ncclCommInitRank",
    "ncclAllReduce",
    "ncclReduce",
    "ncclAllGather",
    "ncclReduceScatter",
    "ncclSend",
    "ncclRecv",
    "ncclBroadcast",
    "ncclCommDestroy",
    "ncclCommAbort",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclCommWindowRegister",
    "ncclCommWindowDeregister",
};

// The library as ctypes.CDLL(path) loads it. Never closed: the process ends with the test.
void* loadByPath() {
  void* library = dlopen(PEERREDUCE_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(library, nullptr) << dlerror();
  return library;
}

TEST(ByPath, EveryFunctionVllmsPyncclLooksUpIsThisLibrarysOwn) {
  void* library = loadByPath();
  ASSERT_NE(library, nullptr);
  Dl_info self{};
  ASSERT_NE(dladdr(dlsym(library, "ncclAllReduce"), &self), 0);
  for (const char* name : kPyncclFunctions) {
    void* function = dlsym(library, name);
    EXPECT_NE(function, nullptr) << name << " cannot be looked up in " << PEERREDUCE_NCCL_LIBRARY_PATH;
    Dl_info info{};
    if (function != nullptr && dladdr(function, &info) != 0) {
      EXPECT_STREQ(info.dli_fname, self.dli_fname) << name << " was found in another object";
    }
  }
}

// Loaded by path, the library still loads the real NCCL itself and forwards to it: here the test double,
// named by PEERREDUCE_NCCL_LIB as vLLM's users name the real libnccl.so.2.
TEST(ByPath, CallsThroughTheHandleReachTheRealNccl) {
  ASSERT_EQ(::setenv("PEERREDUCE_NCCL_LIB", NCCL_TEST_DOUBLE_PATH, 1), 0);
  void* library = loadByPath();
  ASSERT_NE(library, nullptr);
  auto* get_version = reinterpret_cast<decltype(ncclGetVersion)*>(dlsym(library, "ncclGetVersion"));
  auto* get_unique_id = reinterpret_cast<decltype(ncclGetUniqueId)*>(dlsym(library, "ncclGetUniqueId"));
  auto* error_string = reinterpret_cast<decltype(ncclGetErrorString)*>(dlsym(library, "ncclGetErrorString"));
  ASSERT_NE(get_version, nullptr);
  ASSERT_NE(get_unique_id, nullptr);
  ASSERT_NE(error_string, nullptr);
  int version = 0;
  EXPECT_EQ(get_version(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE) << "the double's version";
  ncclUniqueId id{};
  EXPECT_EQ(get_unique_id(&id), ncclSuccess);
  EXPECT_EQ(std::string(id.internal, 6), "double") << "the double made the id";
  EXPECT_GT(std::strlen(error_string(ncclInvalidArgument)), 0u);
}

}  // namespace
