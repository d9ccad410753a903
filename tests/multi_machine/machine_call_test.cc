// peerreduce-bench --machines' call (bench/machine_call.h) on the simulator's machines: every collective,
// both strategies, in and out of place, checked by the benchmark's own check (bench/collective_units.h),
// which must also catch a call that did not run.
#include "bench/machine_call.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/collective_units.h"
#include "multi_machine_case.h"

namespace peerreduce::testing {
namespace {

using bench::Allocation;

TEST(MachineCall, EveryCollectiveAndStrategyPassesTheBenchmarksCheck) {
  constexpr int kRoot = 3;
  constexpr std::size_t kCount = 1000;
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 2};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  const int n = cluster->size();
  const std::size_t elem = sizeof(float);
  for (Collective collective :
       {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
      for (bool in_place : {false, true}) {
        const std::string what = std::string(collectiveName(collective)) + " " + machineStrategyName(strategy) +
                                 (in_place ? " in place" : " out of place");
        // Two allocations per rank as the benchmark has them, poisoned with NaN.
        const auto ranks = static_cast<std::size_t>(n);
        std::vector<std::vector<unsigned char>> send(ranks, std::vector<unsigned char>(ranks * kCount * elem, 0xff));
        std::vector<std::vector<unsigned char>> recv = send;
        auto base = [&](int r, Allocation a) {
          return (a == Allocation::kSend ? send : recv)[static_cast<std::size_t>(r)].data();
        };
        auto received = [&](int r) {
          const bench::Placement p = bench::placementOf(collective, in_place, r, n, kCount, elem);
          const unsigned char* at = base(r, p.recv_in) + p.recv_offset;
          return std::vector<unsigned char>(at, at + p.recv_elems * elem);
        };
        for (int r = 0; r < n; ++r) {
          const bench::Placement p = bench::placementOf(collective, in_place, r, n, kCount, elem);
          if (!bench::readsInput(collective, r, kRoot)) continue;
          const auto input = bench::encodeInput(DataType::kFloat32, r, n, p.send_elems);
          std::memcpy(base(r, p.send_in) + p.send_offset, input.data(), input.size());
        }
        long long before = 0;
        for (int r = 0; r < n; ++r) {
          before += bench::countWrong(received(r), DataType::kFloat32, collective, r, n, kRoot, kCount);
        }
        EXPECT_GT(before, 0) << what << ": a call that did not run must be caught";
        const std::vector<Status> statuses = cluster->run([&](MultiMachineCommunicator& comm, int r) {
          const bench::Placement p = bench::placementOf(collective, in_place, r, n, kCount, elem);
          PR_RETURN_IF_ERROR(
              bench::callMachineCollective(comm, collective, kRoot, strategy, base(r, p.send_in) + p.send_offset,
                                           base(r, p.recv_in) + p.recv_offset, kCount, DataType::kFloat32, nullptr));
          return comm.synchronize(nullptr);
        });
        for (int r = 0; r < n; ++r) {
          const Status& status = statuses[static_cast<std::size_t>(r)];
          ASSERT_TRUE(status.isOk()) << what << ", rank " << r << ": " << status.toString();
          EXPECT_EQ(bench::countWrong(received(r), DataType::kFloat32, collective, r, n, kRoot, kCount), 0)
              << what << ", rank " << r;
        }
      }
    }
  }
}

TEST(MachineCall, AnUnknownCollectiveIsATypedError) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 1};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  float buffer[4] = {};
  const Status s = bench::callMachineCollective(cluster->comm(0), static_cast<Collective>(9), 0, MachineStrategy::kAuto,
                                                buffer, buffer, 4, DataType::kFloat32, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown collective value 9"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace peerreduce::testing
