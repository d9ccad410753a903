#include "plan_runner.h"

#include <cstring>
#include <memory>

#include "reference/reference.h"

namespace peerreduce::testing {

PlanRun runPlanOnSim(const Plan& plan, std::size_t count, DataType dtype, ReduceOp op, std::uint64_t seed,
                     int repetitions, const Topology& topology, Payload payload) {
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
  // Buffers as the collective's API lays them out (peerreduce/communicator.h): a buffer holds every
  // block or only the rank's own; in place, the smaller one is the rank's block of the larger.
  const auto blocks = static_cast<std::size_t>(plan.num_blocks);
  const std::size_t in_count = holdsEveryBlock(plan.collective, BufferKind::kInput) ? blocks * count : count;
  const std::size_t out_count = holdsEveryBlock(plan.collective, BufferKind::kOutput) ? blocks * count : count;
  run.inputs.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(in_count * elem));
  run.outputs.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(out_count * elem));
  for (int r = 0; r < n; ++r) {
    fillPayload(dtype, op, seed, r, run.inputs[static_cast<std::size_t>(r)].data(), in_count, payload);
  }
  auto shared = std::make_shared<const Plan>(plan);
  for (int i = 0; i < repetitions; ++i) {
    for (int r = 0; r < n; ++r) {
      unsigned char* input = run.inputs[static_cast<std::size_t>(r)].data();
      unsigned char* output = run.outputs[static_cast<std::size_t>(r)].data();
      const std::size_t own_block = static_cast<std::size_t>(r) * count * elem;
      ExecutionRequest request;
      request.plan = shared;
      request.send = input;
      request.recv = output;
      if (plan.in_place && plan.collective == Collective::kReduceScatter) {
        request.recv = input + own_block;
      } else if (plan.in_place && plan.collective == Collective::kAllGather) {
        if (i == 0 && count > 0) std::memcpy(output + own_block, input, count * elem);
        request.send = output + own_block;
      } else if (plan.in_place) {
        request.recv = input;
      }
      request.count = count;
      request.block_stride = count;
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
    for (int r = 0; r < n && run.reference_problem.empty(); ++r) {
      const void* output = run.outputs[static_cast<std::size_t>(r)].data();
      std::string problem;
      switch (plan.collective) {
        case Collective::kAllReduce:
          problem = compareToReference(dtype, op, referenceReduce(dtype, op, ins, count), output, count);
          break;
        case Collective::kReduceScatter:
          problem = compareToReference(dtype, op, referenceReduceScatter(dtype, op, ins, count, r), output, count);
          break;
        case Collective::kAllGather:
          problem = compareExactly(dtype, referenceAllGather(dtype, ins, count), output);
          break;
        case Collective::kBroadcast:
          problem = compareExactly(dtype, referenceBroadcast(dtype, ins, count, plan.root), output);
          break;
      }
      if (!problem.empty()) run.reference_problem = "rank " + std::to_string(r) + ": " + problem;
    }
  }
  return run;
}

}  // namespace peerreduce::testing
