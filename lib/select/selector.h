// AlgorithmSelector: picks the algorithm for a message size from the cost model, not from magic
// thresholds.
//
// At creation it predicts, for every candidate plan and every power-of-two size bucket, the time of
// the whole operation (segments included, see segmenting.h) on the communicator's topology, and keeps
// the cheapest per bucket (four buckets per power of two). allreduce() then looks its size up in O(1). Every rank
// builds the same table from the same plans, topology and scratch size, so all ranks agree without talking. Tables are
// memoised process-wide, so the ranks of an in-process world compute it once.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/selection.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "select/plan_cost.h"
#include "select/tuning_table.h"

namespace peerreduce {

// Size buckets: four per power of two (a quarter octave, so a crossover is placed within 19% of where
// the model puts it) from 1 byte to 2^kSelectorMaxLog2 bytes; larger sizes use the last bucket.
inline constexpr int kSelectorBucketsPerOctave = 4;
inline constexpr int kSelectorMaxLog2 = 40;
inline constexpr int kSelectorBuckets = (kSelectorMaxLog2 + 1) * kSelectorBucketsPerOctave;

struct SelectorCandidate {
  std::shared_ptr<const Plan> plan;
};

// Measured choices that override the cost model (select/tuning_table.h), for one architecture; the
// selector consults the entries of its candidates' collective.
struct SelectorTuning {
  const TuningTable* table = nullptr;  // null: cost model only
  std::string architecture;
};

class AlgorithmSelector {
 public:
  // `candidates`: the out-of-place plans the selector may choose from (at least one).
  static StatusOr<std::shared_ptr<const AlgorithmSelector>> create(const std::vector<SelectorCandidate>& candidates,
                                                                   const Topology& topology, std::size_t scratch_bytes,
                                                                   const SelectorTuning& tuning = {});

  // The candidate (index into the list given to create) to run for `bytes`, and its algorithm.
  int chooseCandidate(std::size_t bytes) const { return table_[static_cast<std::size_t>(bucketOf(bytes))]; }
  Algorithm choose(std::size_t bytes) const {
    return candidates_[static_cast<std::size_t>(chooseCandidate(bytes))].plan->algorithm;
  }
  // Whether the choice for `bytes` came from the tuning table rather than the cost model.
  bool tuned(std::size_t bytes) const { return tuned_[static_cast<std::size_t>(bucketOf(bytes))]; }

  // Predicted time of every candidate for `count` elements of `elem_size` bytes, cheapest first.
  // Candidates that cannot run in the scratch are left out.
  std::vector<AlgorithmEstimate> estimate(std::size_t count, std::size_t elem_size) const;
  std::vector<AlgorithmEstimate> estimate(std::size_t count, std::size_t elem_size, PlanCostEvaluator& evaluator) const;

  static int bucketOf(std::size_t bytes);
  // A representative size of the bucket (its middle), where the table is evaluated.
  static std::size_t bucketMiddleBytes(int bucket);

 private:
  std::vector<SelectorCandidate> candidates_;
  Topology topology_;
  std::size_t scratch_bytes_ = 0;
  std::array<int, kSelectorBuckets> table_{};
  std::array<bool, kSelectorBuckets> tuned_{};
};

// Predicted time of `plan` for `count` elements, split into segments that fit `scratch_bytes`.
// Fails with kOutOfMemory when not even one segment fits.
StatusOr<AlgorithmEstimate> estimateOperation(const Plan& plan, std::size_t count, std::size_t elem_size,
                                              PlanCostEvaluator& evaluator, std::size_t scratch_bytes);

}  // namespace peerreduce
