#include "plan_runner.h"

#include <memory>

#include "reference/reference.h"

namespace peerreduce::testing {

PlanRun runPlanOnSim(const Plan& plan, std::size_t count, DataType dtype, ReduceOp op, std::uint64_t seed,
                     int repetitions, const Topology& topology) {
  PlanRun run;
  const int n = plan.world_size;
  sim::SimOptions options;
  options.seed = seed;
  options.topology = topology;
  auto world = sim::SimWorld::create(n, options);
  if (!world.isOk()) {
    run.status = world.status();
    return run;
  }
  const std::size_t elem = dataTypeSize(dtype);
  const auto layout = ChunkLayout::make(count, plan.num_chunks, elem);
  const std::size_t scratch = std::max<std::size_t>(scratchBytes(plan, layout, elem), 1);
  std::vector<std::vector<std::byte>> records;
  for (int r = 0; r < n; ++r) {
    auto record = (*world)->transport(r)->openSymmetric(scratch);
    if (!record.isOk()) {
      run.status = record.status();
      return run;
    }
    records.push_back(record->record);
  }
  for (int r = 0; r < n; ++r) {
    run.status = (*world)->transport(r)->connectPeers(records);
    if (!run.status.isOk()) return run;
  }
  run.inputs.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(count * elem));
  run.outputs.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(count * elem));
  for (int r = 0; r < n; ++r) fillPayload(dtype, op, seed, r, run.inputs[static_cast<std::size_t>(r)].data(), count);
  auto shared = std::make_shared<const Plan>(plan);
  for (int i = 0; i < repetitions; ++i) {
    for (int r = 0; r < n; ++r) {
      ExecutionRequest request;
      request.plan = shared;
      request.send = run.inputs[static_cast<std::size_t>(r)].data();
      request.recv = plan.in_place ? static_cast<void*>(run.inputs[static_cast<std::size_t>(r)].data())
                                   : run.outputs[static_cast<std::size_t>(r)].data();
      request.count = count;
      request.dtype = dtype;
      request.op = op;
      request.layout = layout;
      run.status = (*world)->transport(r)->submit(request, nullptr);
      if (!run.status.isOk()) return run;
    }
  }
  run.status = (*world)->runUntilIdle();
  run.races = (*world)->raceReports();
  run.stats = (*world)->stats();
  if (run.status.isOk() && count > 0 && !plan.in_place && repetitions == 1) {
    std::vector<const void*> ins;
    for (const auto& in : run.inputs) ins.push_back(in.data());
    const auto reference = referenceReduce(dtype, op, ins, count);
    for (int r = 0; r < n && run.reference_problem.empty(); ++r) {
      const std::string problem =
          compareToReference(dtype, op, reference, run.outputs[static_cast<std::size_t>(r)].data(), count);
      if (!problem.empty()) run.reference_problem = "rank " + std::to_string(r) + ": " + problem;
    }
  }
  return run;
}

}  // namespace peerreduce::testing
