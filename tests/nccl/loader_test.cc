// Loading the real NCCL: what can be wrong is a typed error at load time naming the library and what to set.
#include <gtest/gtest.h>

#include <string>

#include "nccl/library_loader.h"

namespace peerreduce::nccl {
namespace {

void ownSymbol() {}
const void* own() { return reinterpret_cast<const void*>(&ownSymbol); }

TEST(Core, LoaderRefusesAMissingLibraryNamingTheSetting) {
  auto loaded = loadNcclLibrary("/nonexistent/libnccl.so.2", true, own());
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kUnavailable);
  const std::string& message = loaded.status().message();
  EXPECT_NE(message.find("/nonexistent/libnccl.so.2"), std::string::npos) << message;
  EXPECT_NE(message.find("PEERREDUCE_NCCL_LIB"), std::string::npos) << message;
}

TEST(Core, LoaderRefusesALibraryThatIsNotNcclListingWhatIsMissing) {
  auto loaded = loadNcclLibrary("libc.so.6", false, own());
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = loaded.status().message();
  EXPECT_NE(message.find("is not NCCL"), std::string::npos) << message;
  // Every required function is named; the optional ones (ncclCommSplit, ncclMemAlloc, ...) are not.
  for (const NcclFunctionInfo& info : kNcclFunctions) {
    EXPECT_EQ(message.find(std::string(info.name) + ",") != std::string::npos ||
                  message.find(std::string(info.name) + ", which") != std::string::npos,
              info.required)
        << info.name << ": " << message;
  }
  EXPECT_NE(message.find("NCCL's soname"), std::string::npos) << message;
}

}  // namespace
}  // namespace peerreduce::nccl
