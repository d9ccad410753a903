// TimingModel: the alpha-beta cost of each plan step on a topology.
//
// Shared by the cost model that the selector uses (PlanCost) and by the simulator's virtual clock, so
// that what the simulator measures in virtual time is exactly what the selector predicted, and a
// difference between them means one of the two executed the plan differently.
//
// A copy or reduce step of B bytes on rank r costs
//   step_overhead + max( max over peers p it touches: latency(r,p) + bytes(p) / bandwidth(r,p),
//                        sum of remote bytes / ingress bandwidth of r,
//                        local bytes / local bandwidth )
// where remote bytes are read from (or written to) a peer's memory over the link and local bytes are
// read or written in r's own memory. A step on an empty chunk costs nothing. A signal costs
// signal_overhead on the sender and becomes visible latency(r, peer) later.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/topology.h"

namespace peerreduce {

class TimingModel {
 public:
  explicit TimingModel(const Topology& topology);

  // Duration of a copy or reduce step of `rank` whose chunks follow `layout`; adds the bytes it moves
  // to `link_bytes` when given (index from * n + to: bytes rank `from` moved in rank `to`'s memory;
  // from == to is local).
  double dataStepUs(int rank, const RankProgram& program, const Step& step, const ChunkLayout& layout,
                    std::size_t elem_size, std::vector<std::uint64_t>* link_bytes = nullptr) const;
  double signalIssueUs() const { return topology_.device().signal_overhead_us; }
  double signalLatencyUs(int from, int to) const { return topology_.link(from, to).latency_us; }

 private:
  const Topology& topology_;
  mutable std::vector<std::uint64_t> scratch_bytes_;  // per-peer bytes of the step being costed
};

}  // namespace peerreduce
