// Loading the test double (which has every function), the double without ncclCommSplit (an older NCCL), the
// double without ncclAllReduce (not NCCL), and the double as if it were this library (a copy of ourselves).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "nccl/library_loader.h"

namespace peerreduce::nccl {
namespace {

void doubleOwnSymbol() {}
const void* doubleOwn() { return reinterpret_cast<const void*>(&doubleOwnSymbol); }

TEST(Core, LoaderResolvesEveryFunctionOfTheDouble) {
  auto loaded = loadNcclLibrary(NCCL_TEST_DOUBLE_PATH, true, doubleOwn());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  for (const NcclFunctionInfo& info : kNcclFunctions) {
    EXPECT_NE(loaded->symbols[static_cast<std::size_t>(info.function)], nullptr) << info.name;
  }
  EXPECT_NE(loaded->file.find("nccl_test_double"), std::string::npos) << loaded->file;
}

TEST(Core, LoaderLoadsAnOlderNcclWithoutItsLaterFunctions) {
  auto loaded = loadNcclLibrary(NCCL_TEST_DOUBLE_WITHOUT_SPLIT_PATH, true, doubleOwn());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->symbols[static_cast<std::size_t>(NcclFunction::kCommSplit)], nullptr);
  EXPECT_NE(loaded->symbols[static_cast<std::size_t>(NcclFunction::kCommInitRank)], nullptr);
}

TEST(Core, LoaderRefusesALibraryWithoutOneRequiredFunction) {
  auto loaded = loadNcclLibrary(NCCL_TEST_DOUBLE_INCOMPLETE_PATH, true, doubleOwn());
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = loaded.status().message();
  EXPECT_NE(message.find("lacks ncclAllReduce, which every NCCL since 2.12 has"), std::string::npos) << message;
}

TEST(Core, LoaderRefusesItself) {
  // The double stands for this library: its own function is the address the loader compares with.
  void* handle = dlopen(NCCL_TEST_DOUBLE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const void* double_function = dlsym(handle, "ncclGroupStart");
  ASSERT_NE(double_function, nullptr);
  auto loaded = loadNcclLibrary(NCCL_TEST_DOUBLE_PATH, true, double_function);
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("is libpeerreduce_nccl itself"), std::string::npos)
      << loaded.status().message();
  dlclose(handle);
}

}  // namespace
}  // namespace peerreduce::nccl
