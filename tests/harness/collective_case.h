// One reduce-scatter, all-gather or broadcast test case, run and checked on a TestWorld, as
// allreduce_case.h does for allreduce: payloads derive from (seed, rank), so every rank computes the
// reference for itself; buffers are laid out as the call's NCCL semantics say (in place, the smaller
// buffer is the rank's block of the larger); the checks are: the calls succeed, bytes around the output
// and the whole send buffer (out of place) are untouched, the output equals the independent reference
// (sim/reference: exact bits for the copying collectives), ranks that receive the same data hold the
// same bits, and the simulator's happens-before checker saw no race. The verdict is collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "allreduce_case.h"
#include "test_world.h"

namespace peerreduce::testing {

struct CollectiveCase {
  Collective collective = Collective::kReduceScatter;
  int world_size = 1;
  std::size_t count = 0;  // per rank's block: recvcount, sendcount, or the broadcast's count
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;  // reduce-scatter only
  Algorithm algorithm = Algorithm::kAuto;
  bool in_place = false;
  std::size_t send_offset = 0;  // elements between the buffer start and the data (unaligned starts)
  std::size_t recv_offset = 0;
  int root = 0;  // broadcast
  std::uint64_t seed = 1;
  Payload payload = Payload::kTypical;  // what the float inputs look like (reference/reference.h)

  std::string describe() const;
};

// Enqueues every case on every local rank back to back (consecutive operations overlap as they may on
// a GPU stream, so the entry fence must keep every pair of collectives apart), completes them all at
// once, then checks each. One outcome per case.
std::vector<CaseOutcome> runCollectiveCases(TestWorld& world, const std::vector<CollectiveCase>& cases);
CaseOutcome runCollectiveCase(TestWorld& world, const CollectiveCase& c);

}  // namespace peerreduce::testing
