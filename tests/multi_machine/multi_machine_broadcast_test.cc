// Broadcast across machines on the simulator: every root (on every machine, at every local rank), with
// machines placed in order and interleaved, in and out of place; exact bytes on every rank.
#include <gtest/gtest.h>

#include "multi_machine_case.h"
#include "rank_threads.h"

namespace peerreduce::testing {
namespace {

std::string broadcastProblem(sim::MultiMachineSimCluster& cluster, int root, std::size_t count, bool in_place) {
  const int n = cluster.size();
  const DataType dtype = DataType::kFloat16;
  const std::size_t bytes = count * 2;
  std::vector<std::vector<std::uint8_t>> in(static_cast<std::size_t>(n), std::vector<std::uint8_t>(bytes));
  std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(n), std::vector<std::uint8_t>(bytes, 0x5A));
  std::vector<const void*> inputs;
  for (int r = 0; r < n; ++r) {
    fillPayload(dtype, ReduceOp::kSum, 77, r, in[static_cast<std::size_t>(r)].data(), count);
    inputs.push_back(in[static_cast<std::size_t>(r)].data());
  }
  const std::vector<std::uint8_t> expected = referenceBroadcast(dtype, inputs, count, root);
  std::vector<Status> statuses(static_cast<std::size_t>(n));
  sim::runOnRankThreads(n, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    void* recv = in_place ? in[i].data() : out[i].data();
    const void* send = r == root ? in[i].data() : nullptr;
    const Status s = cluster.comm(r).broadcast(send, recv, count, dtype, root);
    const Status synced = cluster.comm(r).synchronize();
    statuses[i] = s.isOk() ? synced : s;
  });
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (!statuses[i].isOk()) return "rank " + std::to_string(r) + ": " + statuses[i].toString();
    const std::string wrong = compareExactly(dtype, expected, in_place ? in[i].data() : out[i].data());
    if (!wrong.empty()) return "rank " + std::to_string(r) + ": " + wrong;
  }
  return "";
}

TEST(MultiMachineBroadcast, EveryRootReachesEveryRankExactly) {
  for (bool interleaved : {false, true}) {
    MultiMachineCase c{.machines = 3, .ranks_per_machine = 2, .interleaved = interleaved};
    auto cluster = sim::MultiMachineSimCluster::create(optionsOf(c), multiMachineTestConfig());
    ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
    for (int root = 0; root < (*cluster)->size(); ++root) {
      EXPECT_EQ(broadcastProblem(**cluster, root, 1000 + static_cast<std::size_t>(root), root % 2 == 1), "")
          << "root " << root << (interleaved ? " interleaved" : "");
    }
  }
}

TEST(MultiMachineBroadcast, ARootOutsideTheWorldIsRefusedNamingIt) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 1};
  auto cluster = sim::MultiMachineSimCluster::create(optionsOf(c), multiMachineTestConfig());
  ASSERT_TRUE(cluster.isOk());
  std::vector<float> data(4);
  const Status s = (*cluster)->comm(0).broadcast(data.data(), data.data(), 4, DataType::kFloat32, 2);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("root"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace peerreduce::testing
