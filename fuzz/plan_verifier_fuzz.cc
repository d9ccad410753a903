// Fuzzes the plan verifier with plans decoded from bytes (fuzz/plan_codec.h): raw plans with every
// field chosen by the input, and plans built by the real algorithms with a few fields changed.
// verifyPlan must never crash on any of them. The oracle is the simulator: a plan the verifier accepts
// must, when run, finish without error, without a data race, and with every rank's output equal to the
// independent reference reduction.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "plan_codec.h"
#include "plan_runner.h"
#include "reference/reference.h"
#include "verify/verifier.h"

namespace {

using namespace peerreduce;

void runAcceptedPlan(const Plan& plan, fuzz::FuzzInput& input) {
  const std::size_t count = input.byte() % 97;  // not a multiple of chunk alignment, 0 included
  // Integer sum wraps exactly and max is order-independent: a wrong result is never rounding.
  const ReduceOp op = input.byte() % 2 == 0 ? ReduceOp::kSum : ReduceOp::kMax;
  const DataType dtype = DataType::kInt32;
  const std::uint64_t seed = input.byte();
  const auto run = testing::runPlanOnSim(plan, count, dtype, op, seed);
  const std::string what = " (" + std::string(algorithmName(plan.algorithm)) + ", " + std::to_string(plan.world_size) +
                           " ranks, " + std::to_string(count) + " elements)";
  if (!run.status.isOk())
    fuzz::oracleFailed("an accepted plan failed on the simulator: " + run.status.toString() + what);
  if (!run.races.empty()) fuzz::oracleFailed("an accepted plan races on the simulator: " + run.races.front() + what);
  if (!run.reference_problem.empty())
    fuzz::oracleFailed("an accepted plan computed a wrong result: " + run.reference_problem + what);
  if (!plan.in_place || count == 0) return;
  // In place, the result lands in the input buffers, which runPlanOnSim leaves to the caller to check.
  std::vector<std::vector<unsigned char>> inputs(static_cast<std::size_t>(plan.world_size),
                                                 std::vector<unsigned char>(count * sizeof(std::int32_t)));
  std::vector<const void*> pointers;
  for (int r = 0; r < plan.world_size; ++r) {
    testing::fillPayload(dtype, op, seed, r, inputs[static_cast<std::size_t>(r)].data(), count);
    pointers.push_back(inputs[static_cast<std::size_t>(r)].data());
  }
  const auto reference = testing::referenceReduce(dtype, op, pointers, count);
  for (int r = 0; r < plan.world_size; ++r) {
    const std::string problem =
        testing::compareToReference(dtype, op, reference, run.inputs[static_cast<std::size_t>(r)].data(), count);
    if (!problem.empty())
      fuzz::oracleFailed("an accepted in-place plan computed a wrong result on rank " + std::to_string(r) + ": " +
                         problem + what);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput input(data, size);
  Plan plan;
  if (input.byte() % 2 == 0) {
    plan = fuzz::decodeRawPlan(input);
  } else if (!fuzz::mutateBuiltPlan(input, plan)) {
    return 0;
  }
  const VerifyReport report = verifyPlan(plan);
  fuzz::report(report.ok() ? "accepted " + plan.description : report.toStatus("fuzzed plan").toString().substr(0, 300));
  if (report.ok()) runAcceptedPlan(plan, input);
  return 0;
}
