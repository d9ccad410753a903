// One allreduce test case, run and checked on a TestWorld.
//
// The payload of every rank derives from (seed, rank) alone, so each rank can compute the inputs of
// all ranks and hence the reference result by itself, on the simulator and under mpirun alike.
// runAllreduceCase checks, on every local rank: the calls succeed; bytes around the output (and the
// whole send buffer when out of place) are untouched; the output equals the independent reference
// (exact for integers, within the per-dtype tolerance for floats); all ranks hold identical bits; on
// the simulator, the happens-before checker saw no race. The verdict is collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "test_world.h"

namespace peerreduce::testing {

struct AllreduceCase {
  int world_size = 1;
  std::size_t count = 0;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  Algorithm algorithm = Algorithm::kAuto;
  bool in_place = false;
  std::size_t send_offset = 0;  // elements between the buffer start and the data (unaligned starts)
  std::size_t recv_offset = 0;
  std::uint64_t seed = 1;
  Payload payload = Payload::kTypical;  // what the float inputs look like (reference/reference.h)

  std::string describe() const;
};

struct CaseOutcome {
  bool ok = true;
  std::string problem;            // first local problem, empty when ok
  std::uint64_t result_hash = 0;  // hash of this process's first local output (determinism checks)
};

CaseOutcome runAllreduceCase(TestWorld& world, const AllreduceCase& c);

// What hardware runs after every case: the simulator's bits for the same case and settings (so the same
// plan and segments) against `outcome`'s; "" when they are equal. Any world may be compared.
std::string compareWithSimulator(TestWorld& world, const AllreduceCase& c, const CaseOutcome& outcome);

// Enqueues every case on every local rank back to back, completes them all at once (so consecutive
// operations overlap as they may on a GPU stream), then checks each. One outcome per case.
std::vector<CaseOutcome> runAllreduceCases(TestWorld& world, const std::vector<AllreduceCase>& cases);

// Cases executed by runAllreduceCase in this process (reported at the end of the test binary).
std::uint64_t allreduceCasesRun();

}  // namespace peerreduce::testing
