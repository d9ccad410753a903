// Hardware-only: the direct reduce-scatter, all-gather and broadcast plans run as line kernels
// (kernels/collective_line_kernels.cu) for small blocks, and at two ranks as push kernels past the lines. Many
// operations are enqueued back to back before any completes, so a rank runs as far ahead of its peers as the lines'
// reuse rule lets it: a broadcast's root receives no data, and without its receivers' presence lines it could run two
// broadcasts ahead and overwrite lines a receiver still reads. Every result is checked against the reference (exact
// bits for the copying collectives) by the collective harness.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "collective_case.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

std::shared_ptr<TestWorld> directPlanWorld() {
  WorldProvider& provider = worldProvider();
  EXPECT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  Config config;
  config.algorithm = Algorithm::kOneShot;  // every collective's direct plan
  auto world = provider.acquire(provider.fixedWorldSize(), config, 1);
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  return world.isOk() ? std::move(world).value() : nullptr;
}

void expectEveryCaseExact(TestWorld& world, const std::vector<CollectiveCase>& cases) {
  const std::vector<CaseOutcome> outcomes = runCollectiveCases(world, cases);
  ASSERT_EQ(outcomes.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(outcomes[i].problem, "") << "case " << i << ": " << cases[i].describe();
  }
}

TEST(CollectiveLines, BroadcastsFromOneRootBackToBackStayExact) {
  auto world = directPlanWorld();
  ASSERT_NE(world, nullptr);
  const int n = world->size();
  std::vector<CollectiveCase> cases;
  for (int i = 0; i < 48; ++i) {
    CollectiveCase c;
    c.collective = Collective::kBroadcast;
    c.world_size = n;
    c.root = n - 1;
    c.count = 1 + static_cast<std::size_t>(i) * 97 % 4096;
    c.dtype = i % 3 == 0 ? DataType::kInt8 : DataType::kFloat32;
    c.in_place = i % 2 == 1;
    c.seed = static_cast<std::uint64_t>(i) + 1;
    cases.push_back(c);
  }
  expectEveryCaseExact(*world, cases);
}

// Every collective, in place and not, at unaligned offsets, within the lines' limit and beyond it (the
// interpreter), one after another: the line kernels share their epochs and receive lines with each
// other and with allreduce's, and the interpreted operations keep their own entry fence.
TEST(CollectiveLines, EveryDirectCollectiveBackToBackInEveryFormStaysExact) {
  auto world = directPlanWorld();
  ASSERT_NE(world, nullptr);
  const int n = world->size();
  const Collective collectives[] = {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax};
  // fp32: 131072 is 512 KiB, the default limit, and 262144 1 MiB, the default at two ranks (all a writer's
  // lines hold there); one more vector past each runs in the interpreter.
  const std::size_t counts[] = {1, 5, 1000, 4099, 65536, 70000, 131072, 131076, 262144, 262148};
  std::vector<CollectiveCase> cases;
  int i = 0;
  for (const std::size_t count : counts) {
    for (const Collective collective : collectives) {
      CollectiveCase c;
      c.collective = collective;
      c.world_size = n;
      c.count = count;
      c.op = ops[i % 3];
      c.in_place = i % 2 == 0;
      c.send_offset = static_cast<std::size_t>(i % 3 == 1);
      c.recv_offset = static_cast<std::size_t>(i % 4 == 3);
      c.root = i % n;
      c.seed = static_cast<std::uint64_t>(i) + 100;
      cases.push_back(c);
      ++i;
    }
  }
  expectEveryCaseExact(*world, cases);
}

// Past the lines, at two ranks, the direct plans push (kernels/push_kernels.cuh, pushCollectiveKernel; at
// other world sizes the interpreter runs them, and the cases hold there too). Back to back without waiting:
// a broadcast's root waits for nothing but the receiver's `entered`, so it runs ahead into its next
// operation and signals again while the receiver still counts the pieces of this one; roots alternate,
// reduce-scatters and all-gathers (both ranks sending, on the same counters) come between, blocks are
// ragged, in place and not, at unaligned offsets, and the largest exceed the scratch (several segments).
TEST(CollectiveLines, PushedDirectCollectivesBackToBackStayExact) {
  auto world = directPlanWorld();
  ASSERT_NE(world, nullptr);
  const int n = world->size();
  const Collective collectives[] = {Collective::kBroadcast, Collective::kReduceScatter, Collective::kBroadcast,
                                    Collective::kAllGather, Collective::kBroadcast};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMin};
  // fp32 blocks: one vector past the two-rank lines (1 MiB), a few MiB, ragged, and 9 M elements (36 MiB,
  // more than the default 32 MiB of scratch).
  const std::size_t counts[] = {262148, 262149, 1000003, 4194304, 9000001};
  std::vector<CollectiveCase> cases;
  int i = 0;
  for (const std::size_t count : counts) {
    for (const Collective collective : collectives) {
      CollectiveCase c;
      c.collective = collective;
      c.world_size = n;
      c.count = count;
      c.op = ops[i % 3];
      c.dtype = i % 4 == 3 ? DataType::kBFloat16 : DataType::kFloat32;
      c.in_place = i % 2 == 1;
      c.send_offset = static_cast<std::size_t>(i % 3 == 2);
      c.recv_offset = static_cast<std::size_t>(i % 5 == 4);
      c.root = (i / 2) % n;
      c.seed = static_cast<std::uint64_t>(i) + 500;
      cases.push_back(c);
      ++i;
    }
  }
  expectEveryCaseExact(*world, cases);
}

}  // namespace
}  // namespace peerreduce::testing
