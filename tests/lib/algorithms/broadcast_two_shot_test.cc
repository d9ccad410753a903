// Broadcast two-shot (algorithms/broadcast_two_shot.cc): scatter the root's buffer over the other ranks,
// then all-gather among them. The plan verifies for every world size, root, placement and stage count;
// the simulator running it leaves the root's bits on every rank, without a race; the root's buffer leaves
// the root once where the direct plan sends it n-1 times (the point of the plan: one port per GPU); stage
// counts outside 1..kMaxBroadcastTwoShotStages are refused; it is a broadcast candidate on a full mesh only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/candidates.h"
#include "plan/plan_text.h"
#include "plan_runner.h"
#include "topology/generators.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

Plan twoShot(int n, int root, int stages, bool in_place) {
  PlanRequest request{Algorithm::kTwoShot, n, in_place, {}, {}, stages};
  request.collective = Collective::kBroadcast;
  request.root = root;
  auto plan = buildPlan(request);
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return plan.isOk() ? std::move(plan).value() : Plan{};
}

Plan direct(int n, int root) {
  PlanRequest request{Algorithm::kOneShot, n, false};
  request.collective = Collective::kBroadcast;
  request.root = root;
  return *buildPlan(request);
}

std::string joined(const VerifyReport& report) {
  std::string out;
  for (const auto& p : report.problems) out += p + "\n";
  return out;
}

// Bytes that ranks other than `owner` read out of `owner`'s memory when `plan` runs on `count` elements.
std::uint64_t bytesReadFrom(const Plan& plan, int owner, std::size_t count, std::size_t elem) {
  const ChunkLayout layout = ChunkLayout::make(count, plan.num_chunks, elem);
  std::uint64_t bytes = 0;
  for (int r = 0; r < plan.world_size; ++r) {
    if (r == owner) continue;
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (const Step& step : program.steps) {
      if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) continue;
      for (std::uint32_t s = 0; s < step.src_count; ++s) {
        if (program.sources[step.src_begin + s].rank == owner) bytes += layout.size(layout.chunkOf(step.chunk)) * elem;
      }
    }
  }
  return bytes;
}

std::vector<int> stageCounts() { return {1, 2, 3, kBroadcastTwoShotStages, kMaxBroadcastTwoShotStages}; }

TEST(BroadcastTwoShot, VerifiesForEveryWorldSizeRootPlacementAndStageCount) {
  for (int n = 1; n <= 8; ++n) {
    for (int root = 0; root < n; ++root) {
      for (bool in_place : {false, true}) {
        for (int stages : stageCounts()) {
          const Plan plan = twoShot(n, root, stages, in_place);
          EXPECT_EQ(plan.algorithm, Algorithm::kTwoShot);
          EXPECT_EQ(plan.root, root);
          const VerifyReport report = verifyPlan(plan);
          EXPECT_TRUE(report.ok()) << plan.description << " (in place " << in_place << "):\n" << joined(report);
        }
      }
    }
  }
}

TEST(BroadcastTwoShot, VerifiesAtTheLargestWorld) {
  const int n = kMaxWorldSize;
  for (int root : {0, n / 2, n - 1}) {
    for (bool in_place : {false, true}) {
      const Plan plan = twoShot(n, root, kBroadcastTwoShotStages, in_place);
      const VerifyReport report = verifyPlan(plan);
      EXPECT_TRUE(report.ok()) << plan.description << " (in place " << in_place << "):\n" << joined(report);
    }
  }
}

// Out of place the plan runner compares every output with the root's input; in place each rank's buffer is
// its input and output, so after the run every buffer must hold what the root's held (the root's unchanged).
TEST(BroadcastTwoShot, TheSimulatorLeavesTheRootsBitsOnEveryRank) {
  for (int n = 1; n <= 8; ++n) {
    for (int root = 0; root < n; ++root) {
      for (int stages : {1, 3, kBroadcastTwoShotStages}) {
        for (std::size_t count : {std::size_t{0}, std::size_t{5}, std::size_t{1001}}) {
          const std::string what = "n " + std::to_string(n) + " root " + std::to_string(root) + " stages " +
                                   std::to_string(stages) + " count " + std::to_string(count);
          const testing::PlanRun out =
              testing::runPlanOnSim(twoShot(n, root, stages, false), count, DataType::kInt32, ReduceOp::kSum, 7);
          ASSERT_TRUE(out.status.isOk()) << what << ": " << out.status.toString();
          EXPECT_TRUE(out.races.empty()) << what << ": " << out.races.front();
          EXPECT_EQ(out.reference_problem, "") << what;
          const testing::PlanRun in =
              testing::runPlanOnSim(twoShot(n, root, stages, true), count, DataType::kFloat16, ReduceOp::kSum, 9);
          ASSERT_TRUE(in.status.isOk()) << what << ": " << in.status.toString();
          EXPECT_TRUE(in.races.empty()) << what << " in place: " << in.races.front();
          for (int r = 0; r < n; ++r) {
            EXPECT_EQ(in.inputs[static_cast<std::size_t>(r)], in.inputs[static_cast<std::size_t>(root)])
                << what << " in place: rank " << r;
          }
        }
      }
    }
  }
}

TEST(BroadcastTwoShot, TheRootsBufferLeavesTheRootOnce) {
  constexpr std::size_t kCount = 100003;  // no multiple of the parts: chunks of unequal sizes
  constexpr std::size_t kElem = 4;
  constexpr std::uint64_t kBytes = kCount * kElem;
  for (int n : {2, 3, 4, 5, 8, kMaxWorldSize}) {
    for (int root : {0, n / 2, n - 1}) {
      for (int stages : {1, kBroadcastTwoShotStages}) {
        const Plan plan = twoShot(n, root, stages, false);
        EXPECT_EQ(bytesReadFrom(plan, root, kCount, kElem), kBytes) << plan.description << " n " << n;
        // The gathering: every part is read once by each receiver but the one that took it from the root.
        std::uint64_t gathered = 0;
        for (int r = 0; r < n; ++r) gathered += r == root ? 0 : bytesReadFrom(plan, r, kCount, kElem);
        EXPECT_EQ(gathered, static_cast<std::uint64_t>(n - 2) * kBytes) << plan.description << " n " << n;
      }
      EXPECT_EQ(bytesReadFrom(direct(n, root), root, kCount, kElem), static_cast<std::uint64_t>(n - 1) * kBytes)
          << "the direct plan reads the root's buffer once per other rank";
    }
  }
  // The same, counted by the simulator as it moves the bytes (SimStats::link_bytes, [from * n + to]).
  for (int n : {4, 8}) {
    const int root = n - 1;
    for (const Plan& plan : {twoShot(n, root, kBroadcastTwoShotStages, false), direct(n, root)}) {
      const testing::PlanRun run = testing::runPlanOnSim(plan, kCount, DataType::kFloat32, ReduceOp::kSum, 3);
      ASSERT_TRUE(run.status.isOk()) << run.status.toString();
      EXPECT_EQ(run.reference_problem, "");
      std::uint64_t from_root = 0;
      for (int r = 0; r < n; ++r) {
        if (r != root) from_root += run.stats.link_bytes[static_cast<std::size_t>(r * n + root)];
      }
      const int copies = plan.algorithm == Algorithm::kTwoShot ? 1 : n - 1;
      EXPECT_EQ(from_root, static_cast<std::uint64_t>(copies) * kBytes) << plan.description;
    }
  }
}

TEST(BroadcastTwoShot, StageCountsOutsideTheRangeAreRefused) {
  for (int stages : {0, -1, kMaxBroadcastTwoShotStages + 1}) {
    PlanRequest request{Algorithm::kTwoShot, 4, false, {}, {}, stages};
    request.collective = Collective::kBroadcast;
    auto plan = buildPlan(request);
    ASSERT_FALSE(plan.isOk()) << stages;
    EXPECT_EQ(plan.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find("broadcast two-shot in " + std::to_string(stages) +
                                           " stages; supported 1.." + std::to_string(kMaxBroadcastTwoShotStages)),
              std::string::npos)
        << plan.status().toString();
  }
}

// kMaxBroadcastTwoShotStages is bounded so that every plan can be written as a plan file.
TEST(BroadcastTwoShot, TheLargestPlanFitsAPlanFile) {
  const Plan plan = twoShot(kMaxWorldSize, 5, kMaxBroadcastTwoShotStages, false);
  auto parsed = parsePlanText(formatPlanText(plan));
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->plan.num_chunks, kMaxBroadcastTwoShotStages * (kMaxWorldSize - 1));
}

std::vector<std::string> twoShotCandidates(const CandidateSet& set) {
  std::vector<std::string> out;
  for (const Candidate& c : set.candidates) {
    if (c.algorithm == Algorithm::kTwoShot) out.push_back(c.plans[0]->description);
  }
  return out;
}

TEST(BroadcastTwoShot, IsABroadcastCandidateOnAFullMeshOnly) {
  auto mesh = buildCollectiveCandidates(Collective::kBroadcast, 1, 4, Topology::fullMesh(4), true, Algorithm::kAuto);
  ASSERT_TRUE(mesh.isOk()) << mesh.status().toString();
  ASSERT_GE(mesh->candidates.size(), 3u);
  EXPECT_EQ(mesh->candidates[0].algorithm, Algorithm::kOneShot) << "one-shot first: it wins ties";
  EXPECT_EQ(twoShotCandidates(*mesh),
            (std::vector<std::string>{"broadcast two-shot from 1: scatter to 3 ranks, all-gather among them, 1 "
                                      "pipelined stage",
                                      "broadcast two-shot from 1: scatter to 3 ranks, all-gather among them, " +
                                          std::to_string(kBroadcastTwoShotStages) + " pipelined stages"}));
  EXPECT_EQ(mesh->candidates[1].algorithm, Algorithm::kTwoShot);
  // Two ranks: one plan, the direct one under the two-shot name.
  auto pair = buildCollectiveCandidates(Collective::kBroadcast, 0, 2, Topology::fullMesh(2), true, Algorithm::kAuto);
  ASSERT_TRUE(pair.isOk());
  EXPECT_EQ(twoShotCandidates(*pair),
            std::vector<std::string>{"broadcast two-shot from 0 over 2 ranks: the direct copy"});
  // Forced: the two-shot plans alone.
  auto forced =
      buildCollectiveCandidates(Collective::kBroadcast, 0, 5, Topology::fullMesh(5), true, Algorithm::kTwoShot);
  ASSERT_TRUE(forced.isOk());
  EXPECT_EQ(forced->candidates.size(), 2u);
  EXPECT_EQ(twoShotCandidates(*forced).size(), 2u);
  // A ring of links: the receivers cannot all reach each other.
  auto ring = buildCollectiveCandidates(Collective::kBroadcast, 0, 5, ringTopology(5), false, Algorithm::kAuto);
  ASSERT_TRUE(ring.isOk());
  EXPECT_TRUE(twoShotCandidates(*ring).empty());
  bool excluded = false;
  for (const std::string& why : ring->excluded)
    excluded = excluded || why == "two-shot: needs a link between every pair of ranks";
  EXPECT_TRUE(excluded);
  // The other collectives have no two-shot plan, forced or not.
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (Algorithm only : {Algorithm::kAuto, Algorithm::kTwoShot}) {
      auto set = buildCollectiveCandidates(c, 0, 4, Topology::fullMesh(4), false, only);
      ASSERT_TRUE(set.isOk());
      EXPECT_TRUE(twoShotCandidates(*set).empty()) << collectiveName(c);
      EXPECT_FALSE(set->candidates.empty()) << collectiveName(c) << ": a forced algorithm it lacks leaves all in";
    }
  }
}

}  // namespace
}  // namespace peerreduce
