// The kernels' table of a batch (gpu/batch_table.h): items laid out on vectors of their own, and every
// malformed request refused before a kernel could read past a buffer.
#include "gpu/batch_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace peerreduce::gpu {
namespace {

TEST(BatchTable, ItemsStartOnVectorsOfTheirOwnAndEmptyOnesAreSkipped) {
  std::vector<float> a(5), b(5), c(8), d(8);
  ExecutionRequest request;
  const std::vector<BatchItem> items = {BatchItem{a.data(), b.data(), 5}, BatchItem{nullptr, nullptr, 0},
                                        BatchItem{c.data(), d.data(), 8}};
  request.batch = items;
  request.count = 13;
  BatchTable table{};
  auto bytes = fillBatchTable(request, sizeof(float), 0, table);
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  EXPECT_EQ(*bytes, 32u + 32u);  // 20 bytes round up to two vectors, 32 bytes are two
  ASSERT_EQ(table.items, 2u);
  EXPECT_EQ(table.item[0].first_vector, 0u);
  EXPECT_EQ(table.item[1].first_vector, 2u);
  EXPECT_EQ(table.item[1].bytes, 32u);
}

TEST(BatchTable, MalformedBatchesAreRefusedNamingTheRank) {
  std::vector<float> a(4), b(4);
  const auto refused = [](const ExecutionRequest& request) {
    BatchTable table{};
    auto bytes = fillBatchTable(request, sizeof(float), 3, table);
    EXPECT_EQ(bytes.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find("rank 3"), std::string::npos) << bytes.status().toString();
  };
  ExecutionRequest request;
  const std::vector<BatchItem> too_many(kMaxBatchItemsPerSubmit + 1, BatchItem{a.data(), b.data(), 4});
  const std::vector<BatchItem> one = {BatchItem{a.data(), b.data(), 4}};
  const std::vector<BatchItem> null_recv = {BatchItem{a.data(), nullptr, 4}};
  const std::vector<BatchItem> empty = {BatchItem{nullptr, nullptr, 0}};
  request.batch = too_many;
  request.count = 4 * request.batch.size();
  refused(request);  // too many items
  request.batch = one;
  request.count = 4;
  request.send = a.data();
  refused(request);  // send must be null
  request.send = nullptr;
  request.batch = null_recv;
  refused(request);  // a null item buffer
  request.batch = one;
  request.count = 5;
  refused(request);  // counts that do not add up
  request.batch = empty;
  request.count = 0;
  refused(request);  // nothing to do
}

}  // namespace
}  // namespace peerreduce::gpu
