// The communicator that spans machines (peerreduce/multi_machine.h) with processes as machines: each
// process under mpirun is one machine whose ranks are threads on the simulator's machine world, and
// MpiTransport carries the step between machines (lib/mpi/threaded_machine_world.h). Allreduces of every
// strategy match the reference with the same bits on every rank of every machine and on a rerun; a
// machine lost or a network link down ends every rank's operation with a typed error naming it, within
// the deadline; broadcasts from every root carry the root's bytes everywhere; reduce-scatters and
// all-gathers of both strategies match the reference and rerun with the same bits, and a machine lost
// mid reduce-scatter fails every rank naming it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <cstring>

#include "generators.h"
#include "machine_world.h"
#include "mpi/mpi_process_links.h"
#include "mpi/threaded_machine_world.h"
#include "peerreduce/mpi_bootstrap.h"
#include "peerreduce/simulator.h"
#include "reference/reference.h"

namespace peerreduce::testing {
namespace {

using Clock = std::chrono::steady_clock;

// One machine of a multi-machine world: its threads' communicators.
struct MachineCommunicators {
  std::unique_ptr<mpi::ThreadedMachineWorld> world;
  std::shared_ptr<sim::SimWorld> machine_world;
  std::vector<std::unique_ptr<MultiMachineCommunicator>> comms;  // by local rank
};

Config multiMachineConfig(std::chrono::milliseconds timeout) {
  Config config;
  config.scratch_bytes = std::size_t{1} << 20;
  config.memory.pool_bytes = std::size_t{4} << 20;
  config.timeout = timeout;
  return config;
}

// Creates this process's machine (collective over MPI_COMM_WORLD): K ranks on threads.
std::unique_ptr<MachineCommunicators> makeMachine(std::chrono::milliseconds timeout) {
  auto machine = std::make_unique<MachineCommunicators>();
  mpi::MpiTransportOptions options;
  options.suspicion_window = std::chrono::milliseconds(500);
  auto world = mpi::ThreadedMachineWorld::create(MPI_COMM_WORLD, kLocalRanks, options);
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  if (!world.isOk()) return nullptr;
  machine->world = std::move(*world);
  auto sim_world = sim::SimWorld::create(kLocalRanks);
  EXPECT_TRUE(sim_world.isOk());
  machine->machine_world = *sim_world;
  machine->comms.resize(kLocalRanks);
  const auto factory = machine->world->linksFactory(
      [&](int local) -> StatusOr<std::shared_ptr<Transport>> { return machine->machine_world->transport(local); });
  const int m = machine->world->machine();
  const std::vector<Status> created = onLocalRanks(kLocalRanks, [&](int l) -> Status {
    PR_ASSIGN_OR_RETURN(machine->comms[static_cast<std::size_t>(l)],
                        MultiMachineCommunicator::create(machine->world->worldRank(l), machine->world->worldSize(),
                                                         machine->world->worldBootstrap(l), factory,
                                                         multiMachineConfig(timeout), "machine-" + std::to_string(m)));
    return Status::ok();
  });
  bool ok = true;
  for (const Status& status : created) {
    EXPECT_TRUE(status.isOk()) << status.toString();
    ok = ok && status.isOk();
  }
  return ok ? std::move(machine) : nullptr;
}

struct AllreduceShape {
  std::size_t count = 0;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  MachineStrategy strategy = MachineStrategy::kAuto;
  bool in_place = false;
  std::uint64_t seed = 0;
};

// Every local rank's allreduce of its payload (from (seed, world rank)); their results and statuses.
struct MachineRun {
  std::vector<Status> statuses;
  std::vector<std::vector<std::uint8_t>> results;
  std::vector<Clock::duration> took;
};

MachineRun allreduceOnEveryLocalRank(MachineCommunicators& machine, const AllreduceShape& shape) {
  MachineRun run;
  run.results.resize(kLocalRanks);
  run.took.resize(kLocalRanks);
  const std::size_t bytes = shape.count * dataTypeSize(shape.dtype);
  run.statuses = onLocalRanks(kLocalRanks, [&](int l) -> Status {
    std::vector<std::uint8_t> in(bytes);
    std::vector<std::uint8_t> out(bytes);
    fillPayload(shape.dtype, shape.op, shape.seed, machine.world->worldRank(l), in.data(), shape.count);
    MultiMachineCommunicator& comm = *machine.comms[static_cast<std::size_t>(l)];
    const auto start = Clock::now();
    void* recv = shape.in_place ? in.data() : out.data();
    Status status = comm.allreduce(in.data(), recv, shape.count, shape.dtype, shape.op, nullptr, shape.strategy);
    const Status synced = comm.synchronize();
    if (status.isOk()) status = synced;
    run.took[static_cast<std::size_t>(l)] = Clock::now() - start;
    const auto* result = static_cast<const std::uint8_t*>(recv);
    run.results[static_cast<std::size_t>(l)].assign(result, result + bytes);
    return status;
  });
  return run;
}

MachineCommunicators& sharedMachine() {
  static std::unique_ptr<MachineCommunicators> machine = makeMachine(std::chrono::seconds(30));
  if (!machine) std::abort();  // every other machine would wait for this one
  return *machine;
}

RC_GTEST_PROP(MultiMachineOverMpi, AllreduceMatchesTheReferenceWithTheSameBitsOnEveryRankAndRerun, ()) {
  MachineCommunicators& machine = sharedMachine();
  AllreduceShape shape;
  shape.dtype = static_cast<DataType>(*uniform(rc::gen::inRange(0, kDataTypeCount)));
  shape.op = static_cast<ReduceOp>(*uniform(rc::gen::inRange(0, kReduceOpCount)));
  if (shape.op == ReduceOp::kAvg && !isFloatingPoint(shape.dtype)) shape.op = ReduceOp::kSum;  // refused: below
  shape.strategy =
      *uniform(rc::gen::element(MachineStrategy::kAuto, MachineStrategy::kHierarchical, MachineStrategy::kFlat));
  shape.in_place = *uniform(rc::gen::arbitrary<bool>());
  shape.count = *uniform(rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(1)},
                                                              {2, rc::gen::element<std::size_t>(3, 7, 61, 1021)},
                                                              {5, rc::gen::inRange<std::size_t>(2, 5000)},
                                                              {1, rc::gen::inRange<std::size_t>(5000, 60000)}}));
  shape.seed = *rc::gen::arbitrary<std::uint32_t>();
  RC_TAG(machineStrategyName(shape.strategy));

  const MachineRun first = allreduceOnEveryLocalRank(machine, shape);
  const MachineRun again = allreduceOnEveryLocalRank(machine, shape);
  // The reference of every world rank's payload.
  const int world_size = machine.world->worldSize();
  const std::size_t bytes = shape.count * dataTypeSize(shape.dtype);
  std::vector<std::vector<std::uint8_t>> inputs(static_cast<std::size_t>(world_size), std::vector<std::uint8_t>(bytes));
  std::vector<const void*> pointers;
  for (int r = 0; r < world_size; ++r) {
    fillPayload(shape.dtype, shape.op, shape.seed, r, inputs[static_cast<std::size_t>(r)].data(), shape.count);
    pointers.push_back(inputs[static_cast<std::size_t>(r)].data());
  }
  const ReferenceResult reference = referenceReduce(shape.dtype, shape.op, pointers, shape.count);
  bool ok = true;
  for (int l = 0; l < kLocalRanks; ++l) {
    const auto i = static_cast<std::size_t>(l);
    std::string problem;
    if (!first.statuses[i].isOk()) problem = first.statuses[i].toString();
    if (problem.empty() && !again.statuses[i].isOk()) problem = "rerun: " + again.statuses[i].toString();
    if (problem.empty())
      problem = compareToReference(shape.dtype, shape.op, reference, first.results[i].data(), shape.count);
    if (problem.empty() && first.results[i] != again.results[i]) problem = "a rerun gave other bits";
    if (problem.empty() && first.results[i] != first.results.front()) problem = "bits differ from local rank 0's";
    if (!problem.empty()) {
      std::fprintf(stderr, "machine %d local rank %d: %s\n", machine.world->machine(), l, problem.c_str());
      ok = false;
    }
  }
  for (const auto& other : gatherFromMachines(first.results.front())) ok = ok && other == first.results.front();
  RC_ASSERT(everyMachine(ok));
}

// Broadcast across machines from every root: the root's bytes on every rank of every machine.
TEST(MultiMachineOverMpi, BroadcastFromEveryRootGivesTheRootsBytesEverywhere) {
  MachineCommunicators& machine = sharedMachine();
  constexpr std::size_t kCount = 777;
  const int world_size = machine.world->worldSize();
  bool ok = true;
  for (int root = 0; root < world_size; ++root) {
    std::vector<std::vector<std::uint8_t>> results(kLocalRanks);
    const std::vector<Status> statuses = onLocalRanks(kLocalRanks, [&](int l) -> Status {
      std::vector<std::uint8_t> in(kCount * sizeof(std::uint16_t));
      auto& out = results[static_cast<std::size_t>(l)];
      out.assign(in.size(), 0);
      fillPayload(DataType::kBFloat16, ReduceOp::kSum, 11, machine.world->worldRank(l), in.data(), kCount);
      MultiMachineCommunicator& comm = *machine.comms[static_cast<std::size_t>(l)];
      PR_RETURN_IF_ERROR(comm.broadcast(in.data(), out.data(), kCount, DataType::kBFloat16, root));
      return comm.synchronize();
    });
    std::vector<std::uint8_t> expected(kCount * sizeof(std::uint16_t));
    fillPayload(DataType::kBFloat16, ReduceOp::kSum, 11, root, expected.data(), kCount);
    for (int l = 0; l < kLocalRanks; ++l) {
      EXPECT_TRUE(statuses[static_cast<std::size_t>(l)].isOk()) << statuses[static_cast<std::size_t>(l)].toString();
      EXPECT_EQ(results[static_cast<std::size_t>(l)], expected) << "root " << root << ", local rank " << l;
      ok = ok && statuses[static_cast<std::size_t>(l)].isOk() && results[static_cast<std::size_t>(l)] == expected;
    }
  }
  EXPECT_TRUE(everyMachine(ok));
}

constexpr auto kFaultTimeout = std::chrono::milliseconds(2000);
constexpr auto kMultiMachineMpiSlack = std::chrono::milliseconds(1500);

// Every local rank's reduce-scatter or all-gather of `count` per rank (payloads from (seed, world rank)):
// statuses and outputs.
MachineRun collectiveOnEveryLocalRank(MachineCommunicators& machine, Collective collective,
                                      const AllreduceShape& shape) {
  MachineRun run;
  run.results.resize(kLocalRanks);
  run.took.resize(kLocalRanks);
  const auto world = static_cast<std::size_t>(machine.world->worldSize());
  const std::size_t block = shape.count * dataTypeSize(shape.dtype);
  const bool scatter = collective == Collective::kReduceScatter;
  run.statuses = onLocalRanks(kLocalRanks, [&](int l) -> Status {
    const int r = machine.world->worldRank(l);
    std::vector<std::uint8_t> large(world * block);
    std::vector<std::uint8_t> small(block);
    std::uint8_t* own = large.data() + static_cast<std::size_t>(r) * block;
    if (scatter) fillPayload(shape.dtype, shape.op, shape.seed, r, large.data(), world * shape.count);
    if (!scatter) fillPayload(shape.dtype, shape.op, shape.seed, r, shape.in_place ? own : small.data(), shape.count);
    MultiMachineCommunicator& comm = *machine.comms[static_cast<std::size_t>(l)];
    const auto start = Clock::now();
    std::uint8_t* other = shape.in_place ? own : small.data();
    Status status =
        scatter ? comm.reduceScatter(large.data(), other, shape.count, shape.dtype, shape.op, nullptr, shape.strategy)
                : comm.allGather(other, large.data(), shape.count, shape.dtype, nullptr, shape.strategy);
    const Status synced = comm.synchronize();
    if (status.isOk()) status = synced;
    run.took[static_cast<std::size_t>(l)] = Clock::now() - start;
    const std::uint8_t* result = scatter ? other : large.data();
    run.results[static_cast<std::size_t>(l)].assign(result, result + (scatter ? block : world * block));
    return status;
  });
  return run;
}

// Both collectives, both strategies, in place and not: every rank's block (reduce-scatter) or buffer
// (all-gather, exactly, so the same bits on every machine) against the reference, and a rerun's bits.
TEST(MultiMachineOverMpi, ReduceScatterAndAllGatherMatchTheReferenceAndRerunWithTheSameBits) {
  MachineCommunicators& machine = sharedMachine();
  const int world_size = machine.world->worldSize();
  bool ok = true;
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
      for (bool in_place : {false, true}) {
        AllreduceShape shape;
        shape.count = in_place ? 61 : 1021;
        shape.dtype = in_place ? DataType::kInt64 : DataType::kFloat32;
        shape.strategy = strategy;
        shape.in_place = in_place;
        shape.seed = 5 + static_cast<std::uint64_t>(collective);
        const MachineRun first = collectiveOnEveryLocalRank(machine, collective, shape);
        const MachineRun again = collectiveOnEveryLocalRank(machine, collective, shape);
        const bool scatter = collective == Collective::kReduceScatter;
        const std::size_t in_count = scatter ? static_cast<std::size_t>(world_size) * shape.count : shape.count;
        std::vector<std::vector<std::uint8_t>> inputs(static_cast<std::size_t>(world_size),
                                                      std::vector<std::uint8_t>(in_count * dataTypeSize(shape.dtype)));
        std::vector<const void*> pointers;
        for (int r = 0; r < world_size; ++r) {
          fillPayload(shape.dtype, shape.op, shape.seed, r, inputs[static_cast<std::size_t>(r)].data(), in_count);
          pointers.push_back(inputs[static_cast<std::size_t>(r)].data());
        }
        for (int l = 0; l < kLocalRanks; ++l) {
          const auto i = static_cast<std::size_t>(l);
          const int r = machine.world->worldRank(l);
          std::string problem = first.statuses[i].isOk() ? "" : first.statuses[i].toString();
          if (problem.empty() && !again.statuses[i].isOk()) problem = "rerun: " + again.statuses[i].toString();
          if (problem.empty()) {
            problem = scatter
                          ? compareToReference(shape.dtype, shape.op,
                                               referenceReduceScatter(shape.dtype, shape.op, pointers, shape.count, r),
                                               first.results[i].data(), shape.count)
                          : compareExactly(shape.dtype, referenceAllGather(shape.dtype, pointers, shape.count),
                                           first.results[i].data());
          }
          if (problem.empty() && first.results[i] != again.results[i]) problem = "a rerun gave other bits";
          EXPECT_EQ(problem, "") << collectiveName(collective) << " " << machineStrategyName(strategy)
                                 << (in_place ? " in place" : "") << ", machine " << machine.world->machine()
                                 << " local rank " << l;
          ok = ok && problem.empty();
        }
      }
    }
  }
  EXPECT_TRUE(everyMachine(ok));
}

// The last machine's ends of the network stop, as when its network stack dies: its index.
int loseLastMachine(MachineCommunicators& machine) {
  const int victim = machine.world->machines() - 1;
  if (machine.world->machine() == victim) {
    for (int l = 0; l < kLocalRanks; ++l) machine.world->networkTransport(l)->abort();
  }
  return victim;
}

// Whether every local rank failed within the deadline and, off the lost machine, named it.
bool failedNamingTheLostMachine(const MachineCommunicators& machine, const MachineRun& run, int victim) {
  bool ok = true;
  const std::string named = "machine 'machine-" + std::to_string(victim) + "' lost";
  for (int l = 0; l < kLocalRanks; ++l) {
    const Status& status = run.statuses[static_cast<std::size_t>(l)];
    EXPECT_FALSE(status.isOk());
    EXPECT_LE(run.took[static_cast<std::size_t>(l)], kFaultTimeout + kMultiMachineMpiSlack) << status.toString();
    ok = ok && !status.isOk() && run.took[static_cast<std::size_t>(l)] <= kFaultTimeout + kMultiMachineMpiSlack;
    if (machine.world->machine() != victim) {
      EXPECT_NE(status.message().find(named), std::string::npos) << status.toString();
      ok = ok && status.message().find(named) != std::string::npos;
    }
  }
  return ok;
}

TEST(MultiMachineOverMpi, AMachineLostMidReduceScatterEndsEveryRanksOperationNamingIt) {
  auto machine = makeMachine(kFaultTimeout);
  ASSERT_NE(machine, nullptr);
  const int victim = loseLastMachine(*machine);
  AllreduceShape shape;
  shape.count = 1024;
  shape.strategy = MachineStrategy::kHierarchical;  // the machine's step runs, then the network's fails
  const MachineRun run = collectiveOnEveryLocalRank(*machine, Collective::kReduceScatter, shape);
  const bool ok = failedNamingTheLostMachine(*machine, run, victim);
  std::printf("reduce-scatter, machine %d local rank 0: %s\n", machine->world->machine(),
              run.statuses.front().toString().c_str());
  EXPECT_TRUE(everyMachine(ok));
}

TEST(MultiMachineOverMpi, IntegerAvgIsRefusedOnEveryRank) {
  MachineCommunicators& machine = sharedMachine();
  AllreduceShape shape;
  shape.count = 64;
  shape.dtype = DataType::kInt32;
  shape.op = ReduceOp::kAvg;
  const MachineRun run = allreduceOnEveryLocalRank(machine, shape);
  bool ok = true;
  for (const Status& status : run.statuses) {
    EXPECT_EQ(status.code(), ErrorCode::kUnsupported) << status.toString();
    ok = ok && status.code() == ErrorCode::kUnsupported;
  }
  EXPECT_TRUE(everyMachine(ok));
}

AllreduceShape faultShape() {
  AllreduceShape shape;
  shape.count = 4096;
  shape.strategy = MachineStrategy::kHierarchical;
  return shape;
}

TEST(MultiMachineOverMpi, AMachineLostEndsEveryRanksOperationNamingItWithinTheDeadline) {
  auto machine = makeMachine(kFaultTimeout);
  ASSERT_NE(machine, nullptr);
  const int victim = loseLastMachine(*machine);
  const MachineRun run = allreduceOnEveryLocalRank(*machine, faultShape());
  const bool ok = failedNamingTheLostMachine(*machine, run, victim);
  std::printf("machine %d local rank 0: %s\n", machine->world->machine(), run.statuses.front().toString().c_str());
  EXPECT_TRUE(everyMachine(ok));
}

TEST(MultiMachineOverMpi, ANetworkLinkDownEndsEveryRanksOperationNamingTheMachinesWithinTheDeadline) {
  auto machine = makeMachine(kFaultTimeout);
  ASSERT_NE(machine, nullptr);
  // Local rank 1's network link between machines 0 and 1 goes down, both directions.
  const int m = machine->world->machine();
  if (m <= 1) machine->world->networkTransport(1)->injectLinkDown(1 - m);
  const MachineRun run = allreduceOnEveryLocalRank(*machine, faultShape());
  bool ok = true;
  for (int l = 0; l < kLocalRanks; ++l) {
    const Status& status = run.statuses[static_cast<std::size_t>(l)];
    EXPECT_FALSE(status.isOk());
    EXPECT_LE(run.took[static_cast<std::size_t>(l)], kFaultTimeout + kMultiMachineMpiSlack) << status.toString();
    ok = ok && !status.isOk() && run.took[static_cast<std::size_t>(l)] <= kFaultTimeout + kMultiMachineMpiSlack;
  }
  const Status& seen = run.statuses[1];
  if (m <= 1) {
    // The link's ends name it (this machine first, as its detector sees the link).
    const std::string link = "the network link between machine 'machine-" + std::to_string(m) +
                             "' and machine 'machine-" + std::to_string(1 - m) + "' down";
    EXPECT_NE(seen.message().find(link), std::string::npos) << seen.toString();
    ok = ok && seen.message().find(link) != std::string::npos;
  } else {
    // The machines off the link heard both ends wait for each other.
    EXPECT_EQ(seen.code(), ErrorCode::kLinkDown) << seen.toString();
    EXPECT_NE(seen.message().find("the link between machine 0 and machine 1"), std::string::npos) << seen.toString();
    ok = ok && seen.code() == ErrorCode::kLinkDown;
  }
  std::printf("machine %d local rank 1: %s\n", m, run.statuses[1].toString().c_str());
  EXPECT_TRUE(everyMachine(ok));
}

// The usual launch: one process per rank, machines from host identities (two ranks per machine here),
// the world split by machine and by local rank; the machine worlds run over MPI too (no GPU here).
TEST(MultiMachineOverMpi, OneProcessPerRankSplitsTheWorldByMachineAndByLocalRank) {
  const int rank = thisMachine();
  const int size = machineCount();
  auto world_bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
  ASSERT_TRUE(world_bootstrap.isOk()) << world_bootstrap.status().toString();
  const auto factory =
      mpi::mpiProcessLinksFactory(MPI_COMM_WORLD,
                                  [](const MachineLayout&, MPI_Comm machine,
                                     const std::shared_ptr<Bootstrap>&) -> StatusOr<std::shared_ptr<Transport>> {
                                    PR_ASSIGN_OR_RETURN(auto transports, mpi::createMpiTransports(machine, 1));
                                    return std::shared_ptr<Transport>(transports.front());
                                  });
  auto comm = MultiMachineCommunicator::create(rank, size, *world_bootstrap, factory,
                                               multiMachineConfig(std::chrono::seconds(30)),
                                               "node-" + std::to_string(rank / 2));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  EXPECT_EQ((*comm)->layout().machines, (size + 1) / 2);
  EXPECT_EQ((*comm)->layout().local_rank, rank % 2);
  bool ok = true;
  for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
    constexpr std::size_t kCount = 3001;
    std::vector<std::vector<std::uint8_t>> inputs(static_cast<std::size_t>(size),
                                                  std::vector<std::uint8_t>(kCount * sizeof(double)));
    std::vector<const void*> pointers;
    for (int r = 0; r < size; ++r) {
      fillPayload(DataType::kFloat64, ReduceOp::kSum, 7, r, inputs[static_cast<std::size_t>(r)].data(), kCount);
      pointers.push_back(inputs[static_cast<std::size_t>(r)].data());
    }
    std::vector<std::uint8_t> out(kCount * sizeof(double));
    Status status = (*comm)->allreduce(inputs[static_cast<std::size_t>(rank)].data(), out.data(), kCount,
                                       DataType::kFloat64, ReduceOp::kSum, nullptr, strategy);
    if (status.isOk()) status = (*comm)->synchronize();
    EXPECT_TRUE(status.isOk()) << status.toString();
    const std::string wrong =
        compareToReference(DataType::kFloat64, ReduceOp::kSum,
                           referenceReduce(DataType::kFloat64, ReduceOp::kSum, pointers, kCount), out.data(), kCount);
    EXPECT_EQ(wrong, "") << machineStrategyName(strategy);
    ok = ok && status.isOk() && wrong.empty();
    for (const auto& other : gatherFromMachines(out)) ok = ok && other == out;
  }
  EXPECT_TRUE(everyMachine(ok));
}

}  // namespace
}  // namespace peerreduce::testing
