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
  for (const auto& c : candidates) {
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
  const int bucket = static_cast<int>(std::bit_width(bytes - 1));  // ceil(log2(bytes))
  return std::min(bucket, kSelectorBuckets - 1);
}

StatusOr<AlgorithmEstimate> estimateOperation(const Plan& plan, std::size_t count, std::size_t elem_size,
                                              const Topology& topology, std::size_t scratch_bytes) {
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
  estimate.segments = static_cast<int>(std::min<std::size_t>(full + (rest ? 1 : 0), 1u << 30));
  if (full > 0) {
    PR_ASSIGN_OR_RETURN(PlanCost cost, estimatePlanCost(plan, ChunkLayout::make(segment, plan.num_chunks, elem_size),
                                                       elem_size, topology));
    estimate.predicted_us += cost.time_us * static_cast<double>(full);
  }
  if (rest > 0 || count == 0) {
    PR_ASSIGN_OR_RETURN(PlanCost cost,
                        estimatePlanCost(plan, ChunkLayout::make(rest, plan.num_chunks, elem_size), elem_size, topology));
    estimate.predicted_us += cost.time_us;
  }
  return estimate;
}

StatusOr<std::shared_ptr<const AlgorithmSelector>> AlgorithmSelector::create(
    const std::vector<SelectorCandidate>& candidates, const Topology& topology, std::size_t scratch_bytes) {
  if (candidates.empty()) return invalidArgumentError("algorithm selector needs at least one candidate plan");
  static std::mutex memo_mutex;
  static std::map<std::uint64_t, std::shared_ptr<const AlgorithmSelector>> memo;
  const std::uint64_t key = fingerprint(candidates, topology, scratch_bytes);
  {
    std::lock_guard<std::mutex> lock(memo_mutex);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
  }
  auto selector = std::make_shared<AlgorithmSelector>();
  selector->candidates_ = candidates;
  selector->topology_ = topology;
  selector->scratch_bytes_ = scratch_bytes;
  for (int bucket = 0; bucket < kSelectorBuckets; ++bucket) {
    // Evaluate at the geometric middle of the bucket (2^(b-1), 2^b], so each choice is right for the
    // bulk of its sizes; crossovers land within a factor of sqrt(2).
    const double middle = bucket == 0 ? 1.0 : std::ldexp(1.0, bucket) / 1.4142135623730951;
    const std::size_t count = std::max<std::size_t>(1, static_cast<std::size_t>(middle) / kTableElemSize);
    const auto estimates = selector->estimate(count, kTableElemSize);
    if (estimates.empty()) {
      return outOfMemoryError("no algorithm fits in " + std::to_string(scratch_bytes) +
                              " bytes of scratch (raise PEERREDUCE_SCRATCH_BYTES)");
    }
    selector->table_[static_cast<std::size_t>(bucket)] = estimates.front().algorithm;
  }
  std::lock_guard<std::mutex> lock(memo_mutex);
  constexpr std::size_t kMemoLimit = 64;  // distinct topologies one process meets; bounded so it cannot grow forever
  if (memo.size() >= kMemoLimit) memo.clear();
  auto [it, inserted] = memo.emplace(key, std::move(selector));
  return it->second;
}

std::vector<AlgorithmEstimate> AlgorithmSelector::estimate(std::size_t count, std::size_t elem_size) const {
  std::vector<AlgorithmEstimate> estimates;
  for (const auto& candidate : candidates_) {
    auto e = estimateOperation(*candidate.plan, count, elem_size, topology_, scratch_bytes_);
    if (e.isOk()) estimates.push_back(*e);
  }
  // Stable order on ties: the candidate listed first wins, on every rank.
  std::stable_sort(estimates.begin(), estimates.end(),
                   [](const AlgorithmEstimate& a, const AlgorithmEstimate& b) { return a.predicted_us < b.predicted_us; });
  return estimates;
}

}  // namespace peerreduce
