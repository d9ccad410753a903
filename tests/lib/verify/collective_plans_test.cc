// The plans of reduce-scatter, all-gather and broadcast (algorithms/reduce_scatter.cc, all_gather.cc,
// broadcast.cc): every one verifies for every world size, placement, ring order and root, alone, twice
// in a row and after the other collectives' plans; and the verifier's collective rules (a block a buffer
// does not hold, a broadcast reading a non-root's send buffer, arithmetic in a copying collective, the
// wrong source in an output) each catch the plan broken that way.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

const Collective kCollectives[] = {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast};
const Algorithm kAlgorithms[] = {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                 Algorithm::kRecursiveDoubling, Algorithm::kTree};

// Broadcast has no recursive-doubling plan; two-shot (scatter, then all-gather) is broadcast's alone.
bool hasPlan(Collective collective, Algorithm algorithm) {
  if (algorithm == Algorithm::kTwoShot) return collective == Collective::kBroadcast;
  return collective != Collective::kBroadcast || algorithm != Algorithm::kRecursiveDoubling;
}

std::string joined(const VerifyReport& report) {
  std::string out;
  for (const auto& p : report.problems) out += p + "\n";
  return out;
}

Plan planOf(Collective collective, Algorithm algorithm, int n, bool in_place, int root = 0,
            std::vector<int> order = {}) {
  PlanRequest request{algorithm, n, in_place, std::move(order)};
  request.collective = collective;
  request.root = root;
  auto plan = buildPlan(request);
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return plan.isOk() ? std::move(plan).value() : Plan{};
}

std::vector<int> worldSizes() {
  std::vector<int> sizes;
  for (int n = 1; n <= 17; ++n) sizes.push_back(n);
  for (int n : {31, 32, 33, 63, kMaxWorldSize}) sizes.push_back(n);
  return sizes;
}

TEST(CollectivePlans, EveryPlanVerifiesForEveryWorldSizeAndPlacement) {
  for (Collective collective : kCollectives) {
    for (Algorithm algorithm : kAlgorithms) {
      if (!hasPlan(collective, algorithm)) continue;
      for (int n : worldSizes()) {
        for (bool in_place : {false, true}) {
          // The recursive and tree plans up to 33 ranks (powers of two and their neighbours), and the
          // recursive ones at 64 out of place: the verifier's work grows with n^2 blocks x steps there,
          // which CI's time cannot carry for every variant.
          const bool newer = algorithm == Algorithm::kRecursiveDoubling || algorithm == Algorithm::kTree;
          if (newer && n > 33 && (in_place || algorithm == Algorithm::kTree || n != kMaxWorldSize)) continue;
          // Every root where that is cheap; the first, a middle and the last one in large worlds.
          std::vector<int> roots = {0};
          if (collective == Collective::kBroadcast) {
            roots = n <= 9 ? std::vector<int>{} : std::vector<int>{0, n / 2, n - 1};
            for (int r = 0; n <= 9 && r < n; ++r) roots.push_back(r);
          }
          for (int root : roots) {
            const Plan plan = planOf(collective, algorithm, n, in_place, root);
            EXPECT_EQ(plan.collective, collective);
            EXPECT_EQ(plan.num_blocks, blocksOf(collective, n));
            const VerifyReport report = verifyPlan(plan);
            EXPECT_TRUE(report.ok()) << plan.description << " (n " << n << ", root " << root << ", in place "
                                     << in_place << "):\n"
                                     << joined(report);
          }
        }
      }
    }
  }
}

TEST(CollectivePlans, RingsVerifyOverAnyOrder) {
  for (Collective collective : kCollectives) {
    for (int n : {2, 3, 4, 5}) {  // every cycle order of these sizes
      std::vector<int> order(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
      do {
        const int root = collective == Collective::kBroadcast ? n - 1 : 0;
        const Plan plan = planOf(collective, Algorithm::kRing, n, false, root, order);
        const VerifyReport report = verifyPlan(plan);
        EXPECT_TRUE(report.ok()) << plan.description << ":\n" << joined(report);
      } while (std::next_permutation(order.begin(), order.end()));
    }
  }
}

// Relay trees of every shape the links may force: chains, stars around any rank, and random trees.
TEST(CollectivePlans, TreePlansVerifyOverAnyTree) {
  std::vector<std::vector<int>> trees = {{-1, 0, 1, 2, 3}, {1, -1, 1, 1, 1}, {2, 2, -1, 0, 1, 3, 3}};
  std::uint32_t state = 12345;  // a fixed sequence of random trees (parent below the rank, then permuted)
  for (int n : {6, 9, 13}) {
    std::vector<int> parent(static_cast<std::size_t>(n), -1);
    for (int r = 1; r < n; ++r) {
      state = state * 1103515245u + 12345u;
      parent[static_cast<std::size_t>(r)] = static_cast<int>((state >> 8) % static_cast<std::uint32_t>(r));
    }
    trees.push_back(parent);
  }
  for (const std::vector<int>& parent : trees) {
    const int n = static_cast<int>(parent.size());
    const int tree_root = static_cast<int>(std::find(parent.begin(), parent.end(), -1) - parent.begin());
    for (Collective collective : kCollectives) {
      for (bool in_place : {false, true}) {
        for (int pipeline : {1, 3}) {
          if (pipeline != 1 && collective != Collective::kBroadcast) continue;
          PlanRequest request{Algorithm::kTree, n, in_place, {}, parent, pipeline};
          request.collective = collective;
          request.root = collective == Collective::kBroadcast ? tree_root : 0;
          auto plan = buildPlan(request);
          ASSERT_TRUE(plan.isOk()) << plan.status().toString();
          const VerifyReport report = verifyPlan(*plan);
          EXPECT_TRUE(report.ok()) << plan->description << " (in place " << in_place << "):\n" << joined(report);
        }
      }
    }
  }
}

TEST(CollectivePlans, BinomialTreesHaveLogarithmicDepthFromAnyRoot) {
  for (int n : {1, 2, 3, 5, 8, 13, 64}) {
    for (int root : {0, n / 2, n - 1}) {
      const std::vector<int> parent = binomialTreeParents(n, root);
      auto tree = treeFromParents(parent);
      ASSERT_TRUE(tree.isOk()) << tree.status().toString();
      EXPECT_EQ(tree->root, root);
      // A rank's depth is the number of bits set in its distance from the root: at most ceil(log2 n).
      int depth = 0;
      for (int distance = 0; distance < n; ++distance) depth = std::max(depth, std::popcount(unsigned(distance)));
      EXPECT_EQ(tree->height, depth) << "n " << n << ", root " << root;
      int ceil_log2 = 0;
      while ((1 << ceil_log2) < n) ++ceil_log2;
      EXPECT_LE(tree->height, ceil_log2);
    }
  }
  // 8 ranks from root 3 (rank r is 5 + r ranks after it, modulo 8): relative ranks 1, 2 and 4 (ranks 4, 5,
  // 7) hang off the root, 3 and 5 (ranks 6, 0) off relative 1, 6 (rank 1) off 2, 7 (rank 2) off 3.
  EXPECT_EQ(binomialTreeParents(8, 3), (std::vector<int>{4, 5, 6, -1, 3, 3, 4, 3}));
}

TEST(CollectivePlans, TreeRequestsThatDoNotFitAreRefused) {
  PlanRequest request{Algorithm::kTree, 4, false, {}, {-1, 0, 0, 0}, 1};
  request.collective = Collective::kBroadcast;
  request.root = 2;
  auto wrong_root = buildPlan(request);
  ASSERT_FALSE(wrong_root.isOk());
  EXPECT_NE(wrong_root.status().message().find("broadcast from 2 over a tree rooted at 0"), std::string::npos)
      << wrong_root.status().toString();
  request.collective = Collective::kReduceScatter;
  request.root = 0;
  request.pipeline = 4;
  auto pipelined = buildPlan(request);
  ASSERT_FALSE(pipelined.isOk());
  EXPECT_NE(pipelined.status().message().find("only broadcast pipelines"), std::string::npos);
  request.pipeline = 1;
  request.tree_parent = {-1, 0, 1};
  auto short_tree = buildPlan(request);
  ASSERT_FALSE(short_tree.isOk());
  EXPECT_NE(short_tree.status().message().find("tree lists 3 parents for a world of 4"), std::string::npos);
  request.tree_parent = {1, 0, 0, 0};  // no root: a cycle
  EXPECT_EQ(buildPlan(request).status().code(), ErrorCode::kInvalidArgument);
  request.collective = Collective::kBroadcast;
  request.algorithm = Algorithm::kRecursiveDoubling;
  auto no_doubling = buildPlan(request);
  ASSERT_FALSE(no_doubling.isOk());
  EXPECT_NE(no_doubling.status().message().find(
                "broadcast has one-shot (direct), two-shot, ring, tree and copy-engine-two-shot plans"),
            std::string::npos);
}

TEST(CollectivePlans, MixedSequencesOfCollectivesVerify) {
  for (int n : {2, 3, 4, 7}) {
    const Plan allreduce = *buildPlan({Algorithm::kTwoShot, n, false});
    std::vector<Plan> plans = {allreduce};
    for (Collective collective : kCollectives) {
      const int root = collective == Collective::kBroadcast ? n - 1 : 0;
      for (Algorithm algorithm : kAlgorithms) {
        if (hasPlan(collective, algorithm)) plans.push_back(planOf(collective, algorithm, n, false, root));
      }
    }
    std::vector<const Plan*> sequence;
    for (const Plan& plan : plans) sequence.push_back(&plan);
    // Each plan after every other one: the entry fence must keep any two collectives apart.
    for (std::size_t rotation = 0; rotation < plans.size(); ++rotation) {
      std::rotate(sequence.begin(), sequence.begin() + 1, sequence.end());
      const VerifyReport report = verifySequence(sequence);
      EXPECT_TRUE(report.ok()) << "world " << n << ":\n" << joined(report);
    }
  }
}

TEST(CollectivePlans, BuildPlanRefusesWhatTheCollectivesDoNotHave) {
  PlanRequest request{Algorithm::kTwoShot, 4, false};
  request.collective = Collective::kReduceScatter;
  auto no_two_shot = buildPlan(request);
  ASSERT_FALSE(no_two_shot.isOk());
  EXPECT_NE(no_two_shot.status().message().find("reduce-scatter has one-shot (direct), ring, recursive-doubling, tree "
                                                "and copy-engine-two-shot plans, not two-shot"),
            std::string::npos)
      << no_two_shot.status().toString();
  request.algorithm = Algorithm::kRing;
  request.collective = Collective::kBroadcast;
  request.root = 4;
  auto bad_root = buildPlan(request);
  ASSERT_FALSE(bad_root.isOk());
  EXPECT_NE(bad_root.status().message().find("broadcast root 4 is not a rank of a world of 4"), std::string::npos);
  request.collective = Collective::kAllGather;
  request.root = 1;
  EXPECT_FALSE(buildPlan(request).isOk());
  // Two-shot is broadcast's scatter + all-gather: the other copying collective has no such plan.
  request.algorithm = Algorithm::kTwoShot;
  request.root = 0;
  auto no_all_gather_two_shot = buildPlan(request);
  ASSERT_FALSE(no_all_gather_two_shot.isOk());
  EXPECT_EQ(no_all_gather_two_shot.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(
      no_all_gather_two_shot.status().message().find("all-gather has one-shot (direct), ring, recursive-doubling, tree "
                                                     "and copy-engine-two-shot plans, not two-shot"),
      std::string::npos)
      << no_all_gather_two_shot.status().toString();
}

bool mentions(const VerifyReport& report, const std::string& text) {
  for (const auto& p : report.problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

// The first copy or reduce step of `rank` that reads `kind`.
Step* firstReading(Plan& plan, int rank, BufferKind kind) {
  RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  for (Step& step : program.steps) {
    if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) continue;
    if (program.sources[step.src_begin].kind == kind) return &step;
  }
  return nullptr;
}

TEST(CollectiveVerifier, CatchesATouchOfABlockTheBufferDoesNotHold) {
  // Rank 1 of an all-gather holds only block 1 of its input; make it read block 0 there.
  Plan plan = planOf(Collective::kAllGather, Algorithm::kOneShot, 3, false);
  Step* step = firstReading(plan, 1, BufferKind::kInput);
  ASSERT_NE(step, nullptr);
  step->chunk = 0;
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "touches block 0 of rank 1's send buffer")) << joined(report);
}

TEST(CollectiveVerifier, CatchesABroadcastReadingANonRootSendBuffer) {
  Plan plan = planOf(Collective::kBroadcast, Algorithm::kOneShot, 3, false, 2);
  RankProgram& program = plan.programs[0];
  for (Step& step : program.steps) {
    if (step.kind == StepKind::kCopy) program.sources[step.src_begin] = inputOf(0);
  }
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "reads the send buffer of rank 0, but a broadcast reads only the root's (2)"))
      << joined(report);
}

TEST(CollectiveVerifier, CatchesArithmeticInACopyingCollective) {
  Plan plan = planOf(Collective::kAllGather, Algorithm::kRing, 3, false);
  Step* step = firstReading(plan, 0, BufferKind::kScratch);
  ASSERT_NE(step, nullptr);
  step->kind = StepKind::kReduce;
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "reduces in a all-gather plan")) << joined(report);
}

TEST(CollectiveVerifier, CatchesAnOutputCopiedFromTheWrongRank) {
  // Rank 2 copies block 0 as block 1 and block 1 as block 0: its output would hold the wrong ranks' data.
  Plan plan = planOf(Collective::kAllGather, Algorithm::kOneShot, 3, false);
  RankProgram& program = plan.programs[2];
  int swapped = 0;
  for (Step& step : program.steps) {
    if (step.kind == StepKind::kCopy && program.sources[step.src_begin].kind == BufferKind::kScratch) {
      step.chunk = 1 - step.chunk;  // block 0 read as block 1 and the other way round
      ++swapped;
    }
  }
  ASSERT_EQ(swapped, 2);
  const VerifyReport report = verifyPlan(plan);
  EXPECT_FALSE(report.ok());
}

TEST(CollectiveVerifier, CatchesAReduceScatterMissingAnInput) {
  Plan plan = planOf(Collective::kReduceScatter, Algorithm::kOneShot, 4, false);
  for (Step& step : plan.programs[2].steps) {
    if (step.kind == StepKind::kReduce) step.src_count -= 1;
  }
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "output misses the input of rank 3")) << joined(report);
}

TEST(CollectiveVerifier, CatchesBlocksThatDoNotMatchTheCollective) {
  Plan plan = planOf(Collective::kReduceScatter, Algorithm::kRing, 4, false);
  plan.num_blocks = 1;
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "reduce-scatter plan has 1 blocks; it needs 4")) << joined(report);
}

}  // namespace
}  // namespace peerreduce
