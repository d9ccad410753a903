// MpiTransport's refusals: plans it cannot carry, records and requests that are wrong, and a malformed
// message from a peer, each a typed error naming what was wrong (and the machine).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "algorithms/algorithms.h"
#include "machine_world.h"
#include "mpi/mpi_environment.h"
#include "mpi/mpi_wire.h"

namespace peerreduce::testing {
namespace {

std::shared_ptr<const Plan> oneShot(int machines) {
  auto plan = buildPlan(PlanRequest(Algorithm::kOneShot, machines));
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::make_shared<const Plan>(std::move(*plan));
}

std::shared_ptr<mpi::MpiTransport> unconnectedTransport() {
  auto made = mpi::createMpiTransports(MPI_COMM_WORLD, 1);
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  return made->front();
}

TEST(MpiTransportErrors, APlanThatWritesAPeersMemoryIsUnsupportedNamingTheStep) {
  auto transport = unconnectedTransport();
  const int machines = machineCount();
  Plan plan = *oneShot(machines);
  RankProgram& program = plan.programs[static_cast<std::size_t>(thisMachine())];
  for (Step& step : program.steps) {
    if (step.kind == StepKind::kCopy || step.kind == StepKind::kReduce) {
      step.dst = BufferRef{(thisMachine() + 1) % machines, BufferKind::kScratch, 0};
      break;
    }
  }
  const Status status = transport->preparePlan(std::make_shared<const Plan>(plan));
  EXPECT_EQ(status.code(), ErrorCode::kUnsupported) << status.toString();
  EXPECT_NE(status.toString().find("pull plans only"), std::string::npos) << status.toString();
  EXPECT_NE(status.toString().find("step #"), std::string::npos) << status.toString();
  // A plan for another world size.
  const Status other = transport->preparePlan(oneShot(machines + 1));
  EXPECT_EQ(other.code(), ErrorCode::kInvalidArgument) << other.toString();
}

// `record` rewritten as each machine's own would be (its rank field, after the magic).
std::vector<std::vector<std::byte>> recordsNamingEachMachine(const std::vector<std::byte>& record, int machines) {
  std::vector<std::vector<std::byte>> records(static_cast<std::size_t>(machines), record);
  for (int m = 0; m < machines; ++m) {
    const std::int32_t rank = m;
    std::memcpy(records[static_cast<std::size_t>(m)].data() + sizeof(std::uint32_t), &rank, sizeof(rank));
  }
  return records;
}

TEST(MpiTransportErrors, WrongRecordsAreRefusedNamingTheMachine) {
  auto transport = unconnectedTransport();
  const int machines = machineCount();
  EXPECT_EQ(transport->connectPeers({}).code(), ErrorCode::kInvalidArgument);  // before openSymmetric
  auto opened = transport->openSymmetric(4096);
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  EXPECT_EQ(transport->openSymmetric(4096).status().code(), ErrorCode::kInvalidArgument);  // twice
  const std::vector<std::byte> mine = opened->record;
  EXPECT_EQ(transport->connectPeers({mine}).code(), machines == 1 ? ErrorCode::kOk : ErrorCode::kInvalidArgument);
  // Records as every machine would send them, then one of them wrong.
  const int wrong = (thisMachine() + 1) % machines;
  auto good = recordsNamingEachMachine(mine, machines);
  auto records = good;
  records[static_cast<std::size_t>(wrong)] = mine;  // names this machine, not `wrong`
  Status status = transport->connectPeers(records);
  EXPECT_EQ(status.code(), machines == 1 ? ErrorCode::kOk : ErrorCode::kCorrupt) << status.toString();
  records = good;
  records[static_cast<std::size_t>(wrong)].resize(3);
  status = transport->connectPeers(records);
  EXPECT_EQ(status.code(), ErrorCode::kCorrupt) << status.toString();
  EXPECT_NE(status.toString().find("machine " + std::to_string(wrong)), std::string::npos) << status.toString();
  records = good;
  records[static_cast<std::size_t>(wrong)][0] = std::byte{0};  // not the transport's magic
  EXPECT_EQ(transport->connectPeers(records).code(), ErrorCode::kCorrupt);
  // A peer whose region has another size: the same offsets would not address the same scratch.
  auto bigger_transport = unconnectedTransport();
  auto bigger = bigger_transport->openSymmetric(8192);
  ASSERT_TRUE(bigger.isOk());
  status = transport->connectPeers(recordsNamingEachMachine(bigger->record, machines));
  EXPECT_EQ(status.code(), ErrorCode::kMismatch) << status.toString();
  EXPECT_NE(status.toString().find("8192"), std::string::npos) << status.toString();
}

TEST(MpiTransportErrors, WrongRequestsAreRefusedBeforeAnythingRuns) {
  auto made = makeMachineWorld(1);
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  auto& transport = *made->transports.front();
  const auto plan = oneShot(made->machines);
  std::vector<float> in(64, 1.0f);
  std::vector<float> out(64, 0.0f);
  const ExecutionRequest request = floatAllreduceRequest(plan, in, out, std::chrono::seconds(10));

  ExecutionRequest bad = request;
  bad.layout = ChunkLayout::make(in.size() / 2, plan->num_chunks, sizeof(float));
  EXPECT_EQ(transport.submit(bad, nullptr).code(), ErrorCode::kInvalidArgument);
  bad = request;
  bad.recv = nullptr;
  EXPECT_EQ(transport.submit(bad, nullptr).code(), ErrorCode::kInvalidArgument);
  bad = request;
  bad.scratch_offset = kTestRegionBytes;
  EXPECT_EQ(transport.submit(bad, nullptr).code(), ErrorCode::kOutOfMemory);
  bad = request;
  const BatchItem item{in.data(), out.data(), in.size()};
  bad.batch = std::span<const BatchItem>(&item, 1);
  EXPECT_EQ(transport.submit(bad, nullptr).code(), ErrorCode::kUnsupported);
  bad = request;
  bad.channel = kMaxChannels;
  EXPECT_EQ(transport.submit(bad, nullptr).code(), ErrorCode::kInvalidArgument);
  // None of them was queued: the good one runs alone and is right.
  ASSERT_TRUE(transport.submit(request, nullptr).isOk());
  const Status done = transport.synchronize(nullptr, std::chrono::seconds(20));
  ASSERT_TRUE(done.isOk()) << done.toString();
  EXPECT_EQ(out.front(), static_cast<float>(made->machines));
  EXPECT_EQ(out.back(), static_cast<float>(made->machines));
  // Nothing is exposed that the transport does not have.
  const TransportCapabilities capabilities = transport.capabilities();
  EXPECT_EQ(capabilities.batch_submit, nullptr);
  EXPECT_EQ(capabilities.buffer_sharing, nullptr);
  EXPECT_EQ(capabilities.time_marks, nullptr);
  EXPECT_EQ(transport.identity().architecture, "mpi");
}

TEST(MpiTransportErrors, SubmitBeforeConnectingIsUnavailable) {
  auto transport = unconnectedTransport();
  ExecutionRequest request;
  request.plan = oneShot(machineCount());
  EXPECT_EQ(transport->submit(request, nullptr).code(), ErrorCode::kUnavailable);
}

TEST(MpiTransportErrors, AMalformedMessageFromAPeerIsCorruptNamingItAndThePeersLearnAtOnce) {
  if (machineCount() < 2) GTEST_SKIP() << "needs two machines";
  auto made = makeMachineWorld(1);
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  auto& transport = *made->transports.front();
  if (made->machine == 1) {
    // A read far outside machine 0's region, sent as the transport's own control message.
    mpi::ControlMessage read;
    read.kind = mpi::ControlKind::kRead;
    read.offset = kTestRegionBytes * 2;
    read.bytes = 64;
    ASSERT_EQ(MPI_Send(&read, sizeof(read), MPI_BYTE, 0, mpi::kControlTag, transport.comm()), MPI_SUCCESS);
  }
  const auto plan = oneShot(made->machines);
  std::vector<float> in(256, 1.0f);
  std::vector<float> out(256, 0.0f);
  const ExecutionRequest request = floatAllreduceRequest(plan, in, out, std::chrono::seconds(10));
  const auto start = std::chrono::steady_clock::now();
  Status status = transport.submit(request, nullptr);
  if (status.isOk()) status = transport.synchronize(nullptr, std::chrono::seconds(20));
  const auto took = std::chrono::steady_clock::now() - start;
  bool ok;
  if (made->machine == 0) {
    EXPECT_EQ(status.code(), ErrorCode::kCorrupt) << status.toString();
    EXPECT_NE(status.toString().find("from machine 1"), std::string::npos) << status.toString();
    ok = status.code() == ErrorCode::kCorrupt;
  } else {
    // Machine 0 stopped and said so: no machine waits out its deadline.
    EXPECT_EQ(status.code(), ErrorCode::kPeerLost) << status.toString();
    EXPECT_NE(status.toString().find("machine 0 stopped"), std::string::npos) << status.toString();
    EXPECT_LT(took, std::chrono::seconds(10));
    ok = status.code() == ErrorCode::kPeerLost;
  }
  // The error is sticky: the transport runs nothing more.
  EXPECT_EQ(transport.submit(request, nullptr).code(), status.code());
  EXPECT_TRUE(everyMachine(ok));
}

TEST(MpiTransportErrors, ControlMessagesAreCheckedFieldByField) {
  mpi::ControlMessage good;
  good.kind = mpi::ControlKind::kRead;
  good.offset = 100;
  good.bytes = 28;
  EXPECT_TRUE(mpi::checkControlMessage(good, sizeof(good), 1, 4, 8, 128).isOk());
  EXPECT_EQ(mpi::checkControlMessage(good, sizeof(good) - 1, 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  mpi::ControlMessage bad = good;
  bad.bytes = 29;  // one past the region
  EXPECT_EQ(mpi::checkControlMessage(bad, sizeof(bad), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  bad = good;
  bad.bytes = 0;
  EXPECT_EQ(mpi::checkControlMessage(bad, sizeof(bad), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  bad = good;
  bad.magic = 0;
  EXPECT_EQ(mpi::checkControlMessage(bad, sizeof(bad), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  bad = good;
  bad.kind = static_cast<mpi::ControlKind>(99);
  EXPECT_EQ(mpi::checkControlMessage(bad, sizeof(bad), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  mpi::ControlMessage signal;
  signal.kind = mpi::ControlKind::kSignal;
  signal.flag = 7;
  EXPECT_TRUE(mpi::checkControlMessage(signal, sizeof(signal), 1, 4, 8, 128).isOk());
  signal.flag = 8;
  const Status flag = mpi::checkControlMessage(signal, sizeof(signal), 1, 4, 8, 128);
  EXPECT_EQ(flag.code(), ErrorCode::kCorrupt);
  EXPECT_NE(flag.toString().find("machine 1"), std::string::npos) << flag.toString();
  mpi::ControlMessage suspect;
  suspect.kind = mpi::ControlKind::kSuspect;
  suspect.peer = 3;
  EXPECT_TRUE(mpi::checkControlMessage(suspect, sizeof(suspect), 1, 4, 8, 128).isOk());
  suspect.peer = 4;
  EXPECT_EQ(mpi::checkControlMessage(suspect, sizeof(suspect), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
  suspect.peer = 1;  // itself
  EXPECT_EQ(mpi::checkControlMessage(suspect, sizeof(suspect), 1, 4, 8, 128).code(), ErrorCode::kCorrupt);
}

TEST(MpiTransportErrors, ThreadLevelAndCountsAreChecked) {
  // This binary's main asked for MPI_THREAD_MULTIPLE and got it (Open MPI provides it).
  EXPECT_TRUE(mpi::checkThreadLevelFor(4).isOk());
  EXPECT_EQ(mpi::createMpiTransports(MPI_COMM_WORLD, 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(mpi::createMpiTransports(MPI_COMM_NULL, 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_STREQ(mpi::threadLevelName(MPI_THREAD_FUNNELED), "MPI_THREAD_FUNNELED");
}

}  // namespace
}  // namespace peerreduce::testing
