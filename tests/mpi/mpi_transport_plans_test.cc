// Every shipped plan (allreduce, reduce-scatter, all-gather, broadcast) executed between the machines of
// an mpirun world over MpiTransport, with several local ranks per machine running their own worlds on
// threads at once: each result matches the reference, has the simulator's bits for the same plan and
// payload, the same bits on every machine where the collective gives every rank the same output, and the
// same bits when the operation runs again.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <cstring>

#include "algorithms/algorithms.h"
#include "generators.h"
#include "machine_world.h"
#include "plan_runner.h"
#include "reference/reference.h"

namespace peerreduce::testing {
namespace {

constexpr auto kOperationTimeout = std::chrono::seconds(20);

// The plans a communicator of `machines` ranks may run over a full mesh.
std::vector<PlanRequest> shippedPlans(int machines, int root) {
  std::vector<PlanRequest> plans;
  for (Algorithm a : {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing, Algorithm::kRecursiveDoubling,
                      Algorithm::kRabenseifner}) {
    plans.emplace_back(a, machines);
  }
  plans.emplace_back(Algorithm::kTree, machines, false, std::vector<int>{}, std::vector<int>{}, 1);
  plans.emplace_back(Algorithm::kTree, machines, false, std::vector<int>{}, std::vector<int>{}, 8);
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    for (Algorithm a : {Algorithm::kOneShot, Algorithm::kRing}) {
      PlanRequest request(a, machines);
      request.collective = c;
      request.root = c == Collective::kBroadcast ? root : 0;
      plans.push_back(request);
    }
  }
  PlanRequest scatter_gather(Algorithm::kTwoShot, machines, false, {}, {}, kBroadcastTwoShotStages);
  scatter_gather.collective = Collective::kBroadcast;
  scatter_gather.root = root;
  plans.push_back(scatter_gather);
  return plans;
}

struct CaseShape {
  std::size_t count = 0;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::uint64_t seed = 0;
};

// The buffers of one machine for one operation, laid out as the collective's API lays them out (in
// place, the smaller buffer is the machine's block of the larger), as tests/harness/plan_runner.cc.
struct MachineBuffers {
  std::vector<std::uint8_t> input;
  std::vector<std::uint8_t> output;
  const void* send = nullptr;
  void* recv = nullptr;
  // Where the result is after the operation, and its length in bytes.
  const std::uint8_t* result = nullptr;
  std::size_t result_bytes = 0;
};

MachineBuffers prepareBuffers(const Plan& plan, const CaseShape& shape, int machine) {
  const std::size_t elem = dataTypeSize(shape.dtype);
  const auto blocks = static_cast<std::size_t>(plan.num_blocks);
  const std::size_t in_count =
      holdsEveryBlock(plan.collective, BufferKind::kInput) ? blocks * shape.count : shape.count;
  const std::size_t out_count =
      holdsEveryBlock(plan.collective, BufferKind::kOutput) ? blocks * shape.count : shape.count;
  MachineBuffers b;
  b.input.assign(in_count * elem, 0);
  b.output.assign(out_count * elem, 0);
  fillPayload(shape.dtype, shape.op, shape.seed, machine, b.input.data(), in_count);
  const std::size_t own_block = static_cast<std::size_t>(machine) * shape.count * elem;
  b.send = b.input.data();
  b.recv = b.output.data();
  b.result = b.output.data();
  b.result_bytes = out_count * elem;
  if (plan.in_place && plan.collective == Collective::kReduceScatter) {
    b.recv = b.input.data() + own_block;
    b.result = b.input.data() + own_block;
  } else if (plan.in_place && plan.collective == Collective::kAllGather) {
    if (shape.count > 0) std::memcpy(b.output.data() + own_block, b.input.data(), shape.count * elem);
    b.send = b.output.data() + own_block;
  } else if (plan.in_place) {
    b.recv = b.input.data();
    b.result = b.input.data();
  }
  return b;
}

// Runs `plan` once on this machine's transport and returns its result bytes.
StatusOr<std::vector<std::uint8_t>> runOnce(mpi::MpiTransport& transport, const std::shared_ptr<const Plan>& plan,
                                            const CaseShape& shape) {
  MachineBuffers buffers = prepareBuffers(*plan, shape, transport.rank());
  ExecutionRequest request;
  request.plan = plan;
  request.send = buffers.send;
  request.recv = buffers.recv;
  request.count = shape.count;
  request.block_stride = shape.count;
  request.dtype = shape.dtype;
  request.op = shape.op;
  request.layout = ChunkLayout::make(shape.count, plan->num_chunks, dataTypeSize(shape.dtype));
  request.timeout = kOperationTimeout;
  PR_RETURN_IF_ERROR(transport.submit(request, nullptr));
  PR_RETURN_IF_ERROR(transport.synchronize(nullptr, kOperationTimeout));
  return std::vector<std::uint8_t>(buffers.result, buffers.result + buffers.result_bytes);
}

// What the result of `machine` must be, against the reference of every machine's input: "" when right.
std::string checkAgainstReference(const Plan& plan, const CaseShape& shape, int machine, int machines,
                                  const std::vector<std::uint8_t>& result) {
  if (shape.count == 0) return "";
  std::vector<MachineBuffers> all;
  std::vector<const void*> inputs;
  for (int m = 0; m < machines; ++m) all.push_back(prepareBuffers(plan, shape, m));
  for (const MachineBuffers& b : all) inputs.push_back(b.input.data());
  switch (plan.collective) {
    case Collective::kAllReduce:
      return compareToReference(shape.dtype, shape.op, referenceReduce(shape.dtype, shape.op, inputs, shape.count),
                                result.data(), shape.count);
    case Collective::kReduceScatter:
      return compareToReference(shape.dtype, shape.op,
                                referenceReduceScatter(shape.dtype, shape.op, inputs, shape.count, machine),
                                result.data(), shape.count);
    case Collective::kAllGather:
      return compareExactly(shape.dtype, referenceAllGather(shape.dtype, inputs, shape.count), result.data());
    case Collective::kBroadcast:
      return compareExactly(shape.dtype, referenceBroadcast(shape.dtype, inputs, shape.count, plan.root),
                            result.data());
  }
  return "unknown collective";
}

// The simulator's result for `machine` with the same plan and payload.
std::vector<std::uint8_t> simulatorResult(const Plan& plan, const CaseShape& shape, int machine) {
  const PlanRun run = runPlanOnSim(plan, shape.count, shape.dtype, shape.op, shape.seed);
  if (!run.status.isOk()) return {};
  const std::size_t elem = dataTypeSize(shape.dtype);
  const auto m = static_cast<std::size_t>(machine);
  const std::size_t own_block = m * shape.count * elem;
  const auto& in = run.inputs[m];
  const auto& out = run.outputs[m];
  if (plan.in_place && plan.collective == Collective::kReduceScatter) {
    return {in.begin() + static_cast<std::ptrdiff_t>(own_block),
            in.begin() + static_cast<std::ptrdiff_t>(own_block + shape.count * elem)};
  }
  if (plan.in_place && plan.collective != Collective::kAllGather) return {in.begin(), in.end()};
  return {out.begin(), out.end()};
}

MachineWorld& world() {
  static MachineWorld shared = [] {
    auto made = makeMachineWorld();
    if (!made.isOk()) {
      std::fprintf(stderr, "machine %d: %s\n", thisMachine(), made.status().toString().c_str());
      std::abort();
    }
    return std::move(*made);
  }();
  return shared;
}

RC_GTEST_PROP(MpiTransportPlans, EveryShippedPlanMatchesTheReferenceAndTheSimulatorOnEveryMachineAndRerun, ()) {
  MachineWorld& machines = world();
  const int root = *uniform(rc::gen::inRange(0, machines.machines));
  const std::vector<PlanRequest> plans = shippedPlans(machines.machines, root);
  PlanRequest request = plans[*uniform(rc::gen::inRange<std::size_t>(0, plans.size()))];
  request.in_place = *uniform(rc::gen::arbitrary<bool>());
  CaseShape base;
  base.dtype = static_cast<DataType>(*uniform(rc::gen::inRange(0, kDataTypeCount)));
  base.op = static_cast<ReduceOp>(*uniform(rc::gen::inRange(0, kReduceOpCount)));
  base.count = *uniform(rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                                             {1, rc::gen::just<std::size_t>(1)},
                                                             {2, rc::gen::element<std::size_t>(3, 7, 61, 509, 1021)},
                                                             {5, rc::gen::inRange<std::size_t>(2, 3000)},
                                                             {1, rc::gen::inRange<std::size_t>(3000, 40000)}}));
  base.seed = *rc::gen::arbitrary<std::uint32_t>();
  auto built = buildPlan(request);
  RC_ASSERT(built.isOk());
  const auto plan = std::make_shared<const Plan>(std::move(*built));
  RC_TAG(std::string(collectiveName(plan->collective)) + " " + plan->description);
  // The copying collectives move bits: the API runs them with sum, whatever op an application would name.
  if (plan->collective == Collective::kAllGather || plan->collective == Collective::kBroadcast) {
    base.op = ReduceOp::kSum;
  }

  // Each local rank runs its own world of machines with its own payload, at the same time as the others.
  std::vector<std::string> problems(kLocalRanks);
  std::vector<std::vector<std::uint8_t>> results(kLocalRanks);
  const std::vector<Status> ran = onLocalRanks(kLocalRanks, [&](int l) -> Status {
    CaseShape shape = base;
    shape.seed = base.seed * 131 + static_cast<std::uint64_t>(l);
    auto& transport = *machines.transports[static_cast<std::size_t>(l)];
    PR_ASSIGN_OR_RETURN(auto first, runOnce(transport, plan, shape));
    PR_ASSIGN_OR_RETURN(auto again, runOnce(transport, plan, shape));
    std::string& problem = problems[static_cast<std::size_t>(l)];
    if (first != again) problem = "a rerun gave other bits";
    if (problem.empty()) problem = checkAgainstReference(*plan, shape, machines.machine, machines.machines, first);
    if (problem.empty() && first != simulatorResult(*plan, shape, machines.machine)) {
      problem = "bits differ from the simulator's";
    }
    results[static_cast<std::size_t>(l)] = std::move(first);
    return Status::ok();
  });
  bool ok = true;
  for (int l = 0; l < kLocalRanks; ++l) {
    const auto i = static_cast<std::size_t>(l);
    if (!ran[i].isOk() && problems[i].empty()) problems[i] = ran[i].toString();
    if (!problems[i].empty()) {
      std::fprintf(stderr, "machine %d local rank %d, %s: %s\n", machines.machine, l, plan->description.c_str(),
                   problems[i].c_str());
      ok = false;
    }
  }
  // Every machine's output is the same for the collectives that give every rank the same result.
  if (plan->collective != Collective::kReduceScatter) {
    for (int l = 0; l < kLocalRanks; ++l) {
      auto mine = results[static_cast<std::size_t>(l)];
      mine.resize(plan->collective == Collective::kAllGather
                      ? base.count * dataTypeSize(base.dtype) * static_cast<std::size_t>(machines.machines)
                      : base.count * dataTypeSize(base.dtype));
      const auto all = gatherFromMachines(mine);
      for (const auto& other : all) ok = ok && other == all.front();
    }
  }
  RC_ASSERT(everyMachine(ok));
}

}  // namespace
}  // namespace peerreduce::testing
