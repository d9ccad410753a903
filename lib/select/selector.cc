#include "select/selector.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <mutex>

#include "select/plan_cost.h"
#include "select/segmenting.h"
#include "util/hash.h"

namespace peerreduce {
namespace {

// Element size used to build the table: the cost model depends on bytes, and 4-byte elements make
// chunk boundaries as fine as any dtype's except 1- and 2-byte ones, within 16 bytes per chunk.
constexpr std::size_t kTableElemSize = 4;

std::uint64_t fingerprint(const std::vector<SelectorCandidate>& candidates, const Topology& topology,
                          std::size_t scratch_bytes) {
  Fnv1a hash;
  hash.add(scratch_bytes);
  hash.add(topology.worldSize());
  for (int a = 0; a < topology.worldSize(); ++a) {
    for (int b = 0; b < topology.worldSize(); ++b) {
      const LinkInfo& l = topology.link(a, b);
      hash.add(l.link_class);
      hash.add(l.latency_us);
      hash.add(l.bandwidth_gbps);
    }
  }
  const DeviceModel& d = topology.device();
  hash.add(d.step_overhead_us);
  hash.add(d.signal_overhead_us);
  hash.add(d.local_bandwidth_gbps);
  hash.add(d.ingress_bandwidth_gbps);
  hash.add(d.launch_overhead_us);
  hash.add(d.copy_engine_launch_us);
  hash.add(d.copy_engine_gbps);
  for (const auto& c : candidates) {
    hash.add(c.plan->collective);
    hash.add(c.plan->root);
    hash.add(c.plan->num_blocks);
    hash.add(c.plan->algorithm);
    hash.addString(c.plan->description);
    hash.add(c.plan->num_chunks);
    hash.add(c.plan->scratch_slots);
    for (const auto& program : c.plan->programs) hash.add(program.steps.size());
  }
  return hash.value();
}

}  // namespace

int AlgorithmSelector::bucketOf(std::size_t bytes) {
  if (bytes <= 1) return 0;
  const int octave = static_cast<int>(std::bit_width(bytes)) - 1;  // floor(log2(bytes))
  // The two bits after the leading one say which quarter of the octave `bytes` falls in.
  const std::size_t quarter = octave >= 2 ? (bytes >> (octave - 2)) & 3u : (bytes << (2 - octave)) & 3u;
  const int bucket = octave * kSelectorBucketsPerOctave + static_cast<int>(quarter);
  return std::min(bucket, kSelectorBuckets - 1);
}

std::size_t AlgorithmSelector::bucketMiddleBytes(int bucket) {
  const int octave = bucket / kSelectorBucketsPerOctave;
  const int quarter = bucket % kSelectorBucketsPerOctave;
  const double middle = std::ldexp(1.0 + (quarter + 0.5) / kSelectorBucketsPerOctave, octave);
  return static_cast<std::size_t>(middle);
}

StatusOr<AlgorithmEstimate> estimateOperation(const Plan& plan, std::size_t count, std::size_t elem_size,
                                              PlanCostEvaluator& evaluator, std::size_t scratch_bytes) {
  const std::size_t segment = maxSegmentCount(plan, elem_size, scratch_bytes);
  if (segment == 0) {
    return outOfMemoryError(std::string(algorithmName(plan.algorithm)) + " needs " +
                            std::to_string(plan.scratch_slots) + " scratch slots of at least " +
                            std::to_string(kScratchSlotAlignBytes) + " bytes; " + std::to_string(scratch_bytes) +
                            " bytes of scratch are too few (raise PEERREDUCE_SCRATCH_BYTES)");
  }
  const std::size_t full = segment == 0 ? 0 : count / segment;
  const std::size_t rest = count - full * segment;
  AlgorithmEstimate estimate;
  estimate.algorithm = plan.algorithm;
  estimate.plan = plan.description;
  estimate.segments = static_cast<int>(std::min<std::size_t>(full + (rest ? 1 : 0), 1u << 30));
  if (full > 0) {
    PR_ASSIGN_OR_RETURN(PlanCost cost,
                        evaluator.evaluate(plan, ChunkLayout::make(segment, plan.num_chunks, elem_size), elem_size));
    estimate.predicted_us += cost.time_us * static_cast<double>(full);
  }
  if (rest > 0 || count == 0) {
    PR_ASSIGN_OR_RETURN(PlanCost cost,
                        evaluator.evaluate(plan, ChunkLayout::make(rest, plan.num_chunks, elem_size), elem_size));
    estimate.predicted_us += cost.time_us;
  }
  return estimate;
}

StatusOr<std::shared_ptr<const AlgorithmSelector>> AlgorithmSelector::create(
    const std::vector<SelectorCandidate>& candidates, const Topology& topology, std::size_t scratch_bytes,
    const SelectorTuning& tuning) {
  if (candidates.empty()) return invalidArgumentError("algorithm selector needs at least one candidate plan");
  static std::mutex memo_mutex;
  static std::map<std::uint64_t, std::shared_ptr<const AlgorithmSelector>> memo;
  std::uint64_t key = fingerprint(candidates, topology, scratch_bytes);
  if (tuning.table != nullptr) {
    Fnv1a hash;
    hash.add(key);
    hash.addString(tuning.architecture);
    hash.add(tuning.table->fingerprint());
    key = hash.value();
  }
  // Held while computing: the ranks of an in-process world ask at the same moment, and the first one
  // builds the table for all of them instead of each building its own.
  std::lock_guard<std::mutex> lock(memo_mutex);
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  auto selector = std::make_shared<AlgorithmSelector>();
  selector->candidates_ = candidates;
  selector->topology_ = topology;
  selector->scratch_bytes_ = scratch_bytes;
  if (candidates.size() == 1) {
    // Nothing to choose (a forced algorithm): no need to evaluate anything.
    selector->table_.fill(0);
    return std::shared_ptr<const AlgorithmSelector>(std::move(selector));
  }
  // The decision (docs/ALGORITHMS.md, "How the selector decides"): the cheapest candidate plan under the
  // phase model, segments included; no hand-set thresholds. On a full mesh that is one-shot for small
  // messages (one latency), two-shot for large ones (least data per link); on partial topologies the
  // shallow tree for small messages and the ring for large ones.
  // The cheapest candidate changes at a few crossovers only. Evaluate one bucket per octave, and all
  // four buckets of an octave only where the winner differs from a neighbouring octave's.
  PlanCostEvaluator evaluator(selector->topology_);
  auto cheapest = [&](int bucket) -> StatusOr<int> {
    const std::size_t count = std::max<std::size_t>(1, bucketMiddleBytes(bucket) / kTableElemSize);
    const auto estimates = selector->estimate(count, kTableElemSize, evaluator);
    if (estimates.empty()) {
      return outOfMemoryError("no algorithm fits in " + std::to_string(scratch_bytes) +
                              " bytes of scratch (raise PEERREDUCE_SCRATCH_BYTES)");
    }
    return estimates.front().candidate;
  };
  constexpr int kProbe = kSelectorBucketsPerOctave / 2;  // the bucket that stands for its octave
  std::array<int, kSelectorMaxLog2 + 1> per_octave{};
  for (int octave = 0; octave <= kSelectorMaxLog2; ++octave) {
    PR_ASSIGN_OR_RETURN(per_octave[static_cast<std::size_t>(octave)],
                        cheapest(octave * kSelectorBucketsPerOctave + kProbe));
  }
  for (int octave = 0; octave <= kSelectorMaxLog2; ++octave) {
    const int here = per_octave[static_cast<std::size_t>(octave)];
    const bool uniform = (octave == 0 || per_octave[static_cast<std::size_t>(octave - 1)] == here) &&
                         (octave == kSelectorMaxLog2 || per_octave[static_cast<std::size_t>(octave + 1)] == here);
    for (int q = 0; q < kSelectorBucketsPerOctave; ++q) {
      const int bucket = octave * kSelectorBucketsPerOctave + q;
      if (uniform || q == kProbe) {
        selector->table_[static_cast<std::size_t>(bucket)] = here;
      } else {
        PR_ASSIGN_OR_RETURN(selector->table_[static_cast<std::size_t>(bucket)], cheapest(bucket));
      }
    }
  }
  // Measured choices override the model where the tuning table covers a bucket: the cheapest candidate
  // of the measured algorithm (a tree, say, comes in several pipelining variants). The collective's own
  // entries apply (every candidate is a plan of the same collective), at the table's size for the
  // bucket's block size (nccl-tests' size column: a reduce-scatter's whole send buffer, say).
  if (tuning.table != nullptr) {
    const int world = topology.worldSize();
    const Collective collective = candidates.front().plan->collective;
    for (int bucket = 0; bucket < kSelectorBuckets; ++bucket) {
      const std::size_t middle = bucketMiddleBytes(bucket);
      const auto measured =
          tuning.table->lookup(collective, tuning.architecture, world, tuningTableBytes(collective, world, middle));
      if (!measured) continue;
      const std::size_t count = std::max<std::size_t>(1, middle / kTableElemSize);
      for (const AlgorithmEstimate& e : selector->estimate(count, kTableElemSize, evaluator)) {
        if (e.algorithm != *measured) continue;
        selector->table_[static_cast<std::size_t>(bucket)] = e.candidate;
        selector->tuned_[static_cast<std::size_t>(bucket)] = true;
        break;
      }
    }
  }
  // Distinct (candidates, topology, scratch, tuning) one process meets; bounded so it cannot grow forever. An
  // application meets a handful; a process that makes worlds of many sizes, topologies and forced algorithms
  // (the property suites, the fault campaign: four collectives each) meets hundreds, and at 64 it started over
  // every few worlds, rebuilding the same selectors (a quarter of the campaign's time). Each holds its candidates'
  // pointers and a table of size buckets: a few KiB.
  constexpr std::size_t kMemoLimit = 1024;
  if (memo.size() >= kMemoLimit) memo.clear();
  auto [it, inserted] = memo.emplace(key, std::move(selector));
  return it->second;
}

std::vector<AlgorithmEstimate> AlgorithmSelector::estimate(std::size_t count, std::size_t elem_size) const {
  PlanCostEvaluator evaluator(topology_);
  return estimate(count, elem_size, evaluator);
}

std::vector<AlgorithmEstimate> AlgorithmSelector::estimate(std::size_t count, std::size_t elem_size,
                                                           PlanCostEvaluator& evaluator) const {
  std::vector<AlgorithmEstimate> estimates;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    auto e = estimateOperation(*candidates_[i].plan, count, elem_size, evaluator, scratch_bytes_);
    if (!e.isOk()) continue;
    e->candidate = static_cast<int>(i);
    estimates.push_back(*e);
  }
  // Stable order on ties: the candidate listed first wins, on every rank.
  std::stable_sort(estimates.begin(), estimates.end(), [](const AlgorithmEstimate& a, const AlgorithmEstimate& b) {
    return a.predicted_us < b.predicted_us;
  });
  return estimates;
}

}  // namespace peerreduce
