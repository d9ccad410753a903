// OperationLog (api/operation_log.h): ranks of one machine compare their operations through shared host
// memory. The log alone (ranks as logs over one segment, in threads and in a second process), then a
// communicator over a transport that does not compare operations itself (the simulator with its own check
// hidden), where ranks that disagree get kMismatch and nobody runs the operation wrong.
#include "api/operation_log.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

using peerreduce::testing::mentions;

OperationDescriptor allreduceOf(std::uint64_t count, DataType dtype = DataType::kFloat32,
                                ReduceOp op = ReduceOp::kSum) {
  OperationDescriptor d;
  d.collective = Collective::kAllReduce;
  d.count = count;
  d.dtype = dtype;
  d.op = op;
  return d;
}

// A world's logs over one segment: rank 0 made it, the others opened it by name.
std::vector<std::unique_ptr<OperationLog>> logsOf(int world) {
  std::vector<std::unique_ptr<OperationLog>> logs;
  auto first = OperationLog::create(0, world);
  EXPECT_TRUE(first.isOk()) << first.status().toString();
  if (!first.isOk()) return logs;
  logs.push_back(std::move(first).value());
  for (int r = 1; r < world; ++r) {
    auto opened = OperationLog::open(r, world, logs[0]->name());
    EXPECT_TRUE(opened.isOk()) << opened.status().toString();
    if (!opened.isOk()) return {};
    logs.push_back(std::move(opened).value());
  }
  EXPECT_TRUE(logs[0]->unlink().isOk());
  return logs;
}

TEST(OperationLog, RanksThatAgreePostPastManyRingsWithoutError) {
  auto logs = logsOf(3);
  ASSERT_EQ(logs.size(), 3u);
  for (std::uint64_t k = 0; k < 3 * OperationLog::kEntries + 7; ++k) {
    const OperationDescriptor d = allreduceOf(k % 5 + 1, k % 2 ? DataType::kBFloat16 : DataType::kInt32);
    for (auto& log : logs) ASSERT_TRUE(log->post(d).isOk()) << "operation " << k;
  }
  for (auto& log : logs) {
    EXPECT_TRUE(log->reported().isOk());
    EXPECT_EQ(log->posted(), 3 * OperationLog::kEntries + 7);
  }
}

TEST(OperationLog, TheLaterRankFindsADifferentCountAndEveryRankReportsIt) {
  auto logs = logsOf(3);
  ASSERT_EQ(logs.size(), 3u);
  ASSERT_TRUE(logs[0]->post(allreduceOf(1024)).isOk());
  ASSERT_TRUE(logs[2]->post(allreduceOf(1024)).isOk());
  const Status later = logs[1]->post(allreduceOf(1000));
  EXPECT_EQ(later.code(), ErrorCode::kMismatch) << later.toString();
  EXPECT_TRUE(mentions(later,
                       "operation 0 of the communicator differs between ranks: rank 1 called allreduce of "
                       "1000 fp32 (sum), rank 0 called allreduce of 1024 fp32 (sum)"))
      << later.message();
  EXPECT_TRUE(mentions(later, "destroy and create them again")) << later.message();
  // The ranks whose operation was enqueued find the report when their wait ends, in place of its error.
  const Status waited = logs[0]->explain(timeoutError("rank 0 waited 30000 ms for rank 1"));
  EXPECT_EQ(waited.code(), ErrorCode::kMismatch) << waited.toString();
  EXPECT_TRUE(mentions(waited, "rank 1 called allreduce of 1000 fp32 (sum)")) << waited.message();
  EXPECT_TRUE(logs[2]->explain(Status::ok()).isOk()) << "success stays success";
  // Sticky: every later operation of every rank is refused.
  for (auto& log : logs) EXPECT_EQ(log->post(allreduceOf(1024)).code(), ErrorCode::kMismatch);
}

// The stop words: one page each, 0 while ranks agree, 1 on every rank once one refused an operation (the
// launched ranks' transports read them as abort words).
TEST(OperationLog, ARefusalSetsEveryRanksStopWord) {
  auto logs = logsOf(3);
  ASSERT_EQ(logs.size(), 3u);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (int r = 0; r < 3; ++r) {
    const auto address = reinterpret_cast<std::uintptr_t>(logs[0]->stopWord(r));
    EXPECT_EQ(address % page, 0u) << "rank " << r << "'s word starts its own page";
    EXPECT_EQ(*logs[2]->stopWord(r), 0u);
  }
  EXPECT_NE(logs[0]->stopWord(0), logs[0]->stopWord(1));
  for (auto& log : logs) ASSERT_TRUE(log->post(allreduceOf(8)).isOk());
  for (int r = 0; r < 3; ++r) EXPECT_EQ(*logs[1]->stopWord(r), 0u) << "agreeing ranks stop nobody";
  ASSERT_TRUE(logs[0]->post(allreduceOf(8)).isOk());
  ASSERT_EQ(logs[1]->post(allreduceOf(9)).code(), ErrorCode::kMismatch);
  // Every rank's mapping sees every word set (the same pages, mapped by each rank).
  for (int r = 0; r < 3; ++r) EXPECT_EQ(*logs[0]->stopWord(r), 1u) << "rank " << r;
  // keepAlive holds the pages after the log itself is gone.
  std::shared_ptr<void> held = logs[2]->keepAlive();
  std::uint32_t* word = logs[2]->stopWord(2);
  logs[2].reset();
  EXPECT_EQ(*word, 1u);
}

TEST(OperationLog, EachFieldIsCompared) {
  OperationDescriptor base = allreduceOf(64);
  std::vector<OperationDescriptor> others(6, base);
  others[0].dtype = DataType::kInt32;
  others[1].op = ReduceOp::kMax;
  others[2].collective = Collective::kReduceScatter;
  others[3].collective = Collective::kBroadcast;
  others[4].root = 1;
  others[5].items = 2;
  for (const OperationDescriptor& other : others) {
    auto logs = logsOf(2);
    ASSERT_EQ(logs.size(), 2u);
    ASSERT_TRUE(logs[0]->post(base).isOk());
    const Status s = logs[1]->post(other);
    EXPECT_EQ(s.code(), ErrorCode::kMismatch) << other.describe();
    EXPECT_TRUE(mentions(s, "rank 1 called " + other.describe() + ", rank 0 called " + base.describe())) << s.message();
  }
}

TEST(OperationLog, DescriptionsNameWhatTheCallsHave) {
  OperationDescriptor broadcast = allreduceOf(8, DataType::kInt8);
  broadcast.collective = Collective::kBroadcast;
  broadcast.root = 3;
  EXPECT_EQ(broadcast.describe(), "broadcast of 8 int8 from rank 3");
  OperationDescriptor gather = allreduceOf(16);
  gather.collective = Collective::kAllGather;
  EXPECT_EQ(gather.describe(), "all-gather of 16 fp32");
  OperationDescriptor batch = allreduceOf(96, DataType::kFloat32, ReduceOp::kMin);
  batch.items = 3;
  EXPECT_EQ(batch.describe(), "a batch of 3 allreduces, 96 fp32 (min)");
}

// A rank a whole ring ahead has overwritten the entry a late rank would compare with: not checked (the
// bound the header states), and never a false mismatch.
TEST(OperationLog, ARankAWholeRingAheadIsNotCompared) {
  auto logs = logsOf(2);
  ASSERT_EQ(logs.size(), 2u);
  for (std::uint64_t k = 0; k < OperationLog::kEntries + 1; ++k) ASSERT_TRUE(logs[0]->post(allreduceOf(k + 1)).isOk());
  EXPECT_TRUE(logs[1]->post(allreduceOf(999)).isOk());  // entry 0 of rank 0 now holds its operation kEntries
  EXPECT_TRUE(logs[1]->post(allreduceOf(2)).isOk());    // operation 1's entry still holds operation 1: equal
  EXPECT_EQ(logs[1]->post(allreduceOf(7)).code(), ErrorCode::kMismatch);  // operation 2 was 3 on rank 0
}

// Ranks posting at the same time: nothing is a mismatch while they agree (the last round), and where
// one rank differs at one operation, every error any rank gets is about that operation (found there, or
// the report another rank wrote, which is sticky), whatever the interleaving.
TEST(OperationLog, ConcurrentRanksReportOnlyTheDifferentOperation) {
  constexpr int kWorld = 4;
  constexpr std::uint64_t kOps = 3000;
  constexpr std::uint64_t kDiffering = 2345;
  for (int round = 0; round < 4; ++round) {
    const int odd_rank = round < 3 ? round + 1 : -1;  // the last round: every rank agrees
    auto logs = logsOf(kWorld);
    ASSERT_EQ(logs.size(), static_cast<std::size_t>(kWorld));
    std::vector<Status> first_error(kWorld);
    std::atomic<int> ready{0};
    std::vector<std::thread> ranks;
    for (int r = 0; r < kWorld; ++r) {
      ranks.emplace_back([&, r] {
        ready.fetch_add(1);
        while (ready.load() < kWorld) {
        }
        for (std::uint64_t k = 0; k < kOps; ++k) {
          const bool odd_one = r == odd_rank && k == kDiffering;
          const Status s = logs[static_cast<std::size_t>(r)]->post(allreduceOf(odd_one ? 1 : 2 + k % 3));
          if (!s.isOk()) {
            first_error[static_cast<std::size_t>(r)] = s;
            return;
          }
        }
      });
    }
    for (auto& t : ranks) t.join();
    for (int r = 0; r < kWorld; ++r) {
      const Status& s = first_error[static_cast<std::size_t>(r)];
      if (odd_rank < 0) {
        EXPECT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
        continue;
      }
      if (s.isOk()) continue;  // finished before anyone found it (the others ran a ring or more ahead)
      EXPECT_EQ(s.code(), ErrorCode::kMismatch);
      EXPECT_TRUE(mentions(s, "operation 2345 of the communicator") || mentions(s, "another rank found"))
          << "rank " << r << ": " << s.message();
    }
    const Status report = logs[0]->reported();
    if (!report.isOk()) {
      EXPECT_TRUE(mentions(report, "operation 2345 of the communicator")) << report.message();
    }
  }
}

// Lockstep ranks (a barrier between operations, as collectives keep them) always find it.
TEST(OperationLog, RanksInStepAlwaysFindTheDifference) {
  auto logs = logsOf(2);
  ASSERT_EQ(logs.size(), 2u);
  Status results[2];
  std::thread other([&] { results[1] = logs[1]->post(allreduceOf(5)); });
  results[0] = logs[0]->post(allreduceOf(6));
  other.join();
  const bool found = results[0].code() == ErrorCode::kMismatch || results[1].code() == ErrorCode::kMismatch;
  EXPECT_TRUE(found) << results[0].toString() << " / " << results[1].toString();
  EXPECT_EQ(logs[0]->reported().code(), ErrorCode::kMismatch);
}

// A second process maps the log by name, as another rank's process does on a GPU machine.
TEST(OperationLog, ARankInAnotherProcessIsCompared) {
  auto made = OperationLog::create(0, 2);
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  std::unique_ptr<OperationLog> log = std::move(made).value();
  ASSERT_TRUE(log->post(allreduceOf(10, DataType::kFloat16)).isOk());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto opened = OperationLog::open(1, 2, log->name());
    if (!opened.isOk()) ::_exit(2);
    const Status s = (*opened)->post(allreduceOf(10, DataType::kBFloat16));
    ::_exit(s.code() == ErrorCode::kMismatch ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child could not map the log; 3: it found no mismatch";
  const Status reported = log->reported();
  EXPECT_EQ(reported.code(), ErrorCode::kMismatch);
  EXPECT_TRUE(mentions(reported, "rank 1 called allreduce of 10 bf16 (sum), rank 0 called allreduce of 10 fp16 (sum)"))
      << reported.message();
  EXPECT_TRUE(log->unlink().isOk());
  EXPECT_FALSE(std::filesystem::exists("/dev/shm" + log->name()));
}

TEST(OperationLog, BadArgumentsAndForeignSegmentsAreRefused) {
  EXPECT_EQ(OperationLog::create(2, 2).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(OperationLog::create(0, kMaxWorldSize + 1).status().code(), ErrorCode::kInvalidArgument);
  auto made = OperationLog::create(0, 2);
  ASSERT_TRUE(made.isOk());
  // A log of another world size is not this world's.
  const Status wrong_world = OperationLog::open(1, 3, (*made)->name()).status();
  EXPECT_NE(wrong_world.code(), ErrorCode::kOk);
  EXPECT_EQ(OperationLog::open(1, 2, "/not-a-peerreduce-name").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE((*made)->unlink().isOk());
  EXPECT_EQ(OperationLog::open(1, 2, (*made)->name()).status().code(), ErrorCode::kUnavailable);
}

// ---- through a communicator ----------------------------------------------------------------------

// The simulator with its own comparison hidden: the communicator's log is what checks. It adopts stop
// words as a GPU does (records the word it was given).
class UncheckedTransport : public TransportWrapper, private StopWordAdoption {
 public:
  using TransportWrapper::TransportWrapper;
  TransportIdentity identity() const override {
    TransportIdentity inner = TransportWrapper::identity();
    inner.compares_operations = false;
    return inner;
  }
  TransportCapabilities capabilities() override {
    TransportCapabilities caps = TransportWrapper::capabilities();
    caps.stop_word_adoption = this;
    return caps;
  }
  Status adoptStopWord(std::shared_ptr<void> owner, std::uint32_t* word) override {
    if (refuse_stop_word) return unavailableError("no stop words in this test");
    owner_ = std::move(owner);
    stop_word = word;
    return Status::ok();
  }

  std::uint32_t* stop_word = nullptr;
  bool refuse_stop_word = false;

 private:
  std::shared_ptr<void> owner_;
};

struct LogWorld {
  std::shared_ptr<sim::SimWorld> sim;
  std::vector<std::shared_ptr<UncheckedTransport>> transports;
  std::vector<std::unique_ptr<Communicator>> comms;
};

LogWorld makeWorld(int n, Config config, bool refuse_stop_words = false) {
  LogWorld out;
  auto world = sim::SimWorld::create(n);
  EXPECT_TRUE(world.isOk());
  if (!world.isOk()) return out;
  out.sim = *world;
  config.timeout = milliseconds(2000);
  std::vector<Status> status(static_cast<std::size_t>(n));
  std::vector<std::unique_ptr<Communicator>> comms(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    out.transports.push_back(std::make_shared<UncheckedTransport>(out.sim->transport(r)));
    out.transports.back()->refuse_stop_word = refuse_stop_words;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto made =
          Communicator::create(r, n, out.sim->bootstrap(r), out.transports[static_cast<std::size_t>(r)], config);
      if (made.isOk()) {
        comms[static_cast<std::size_t>(r)] = std::move(made).value();
      } else {
        status[static_cast<std::size_t>(r)] = made.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(status[static_cast<std::size_t>(r)].isOk()) << status[static_cast<std::size_t>(r)].toString();
    if (comms[static_cast<std::size_t>(r)]) out.comms.push_back(std::move(comms[static_cast<std::size_t>(r)]));
  }
  return out;
}

TEST(OperationLogCommunicator, AgreeingRanksRunAsBefore) {
  LogWorld w = makeWorld(2, Config{});
  ASSERT_EQ(w.comms.size(), 2u);
  std::vector<std::int32_t> data[2] = {std::vector<std::int32_t>(100, 3), std::vector<std::int32_t>(100, 4)};
  for (int k = 0; k < 5; ++k) {
    for (int r = 0; r < 2; ++r)
      ASSERT_TRUE(w.comms[r]->allreduce(data[r].data(), data[r].data(), 100, DataType::kInt32, ReduceOp::kSum).isOk());
  }
  ASSERT_TRUE(w.sim->runUntilIdle().isOk());
  EXPECT_EQ(data[0], std::vector<std::int32_t>(100, 7 * 16));
  EXPECT_EQ(data[1], data[0]);
}

TEST(OperationLogCommunicator, ARankWithAnotherCountIsRefusedAndItsPeerLearnsWhy) {
  LogWorld w = makeWorld(2, Config{});
  ASSERT_EQ(w.comms.size(), 2u);
  std::vector<float> a(100, 1.0f), b(100, 2.0f);
  const std::vector<float> b_before = b;
  ASSERT_TRUE(w.comms[0]->allreduce(a.data(), a.data(), 100, DataType::kFloat32, ReduceOp::kSum).isOk());
  const Status refused = w.comms[1]->allreduce(b.data(), b.data(), 96, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(refused.code(), ErrorCode::kMismatch) << refused.toString();
  EXPECT_TRUE(mentions(refused, "rank 1 called allreduce of 96 fp32 (sum), rank 0 called allreduce of 100 fp32 (sum)"))
      << refused.message();
  // Each transport was given its rank's stop word at creation, and the refusal set rank 0's.
  ASSERT_NE(w.transports[0]->stop_word, nullptr);
  ASSERT_NE(w.transports[1]->stop_word, nullptr);
  EXPECT_NE(w.transports[0]->stop_word, w.transports[1]->stop_word);
  EXPECT_EQ(*w.transports[0]->stop_word, 1u);
  // Rank 0's operation cannot complete without rank 1; when it ends, rank 0 learns the reason.
  EXPECT_FALSE(w.sim->runUntilIdle().isOk());
  const Status peer = w.comms[0]->asyncError();
  EXPECT_EQ(peer.code(), ErrorCode::kMismatch) << peer.toString();
  EXPECT_TRUE(mentions(peer, "rank 1 called allreduce of 96 fp32")) << peer.message();
  EXPECT_EQ(b, b_before) << "the refused rank's buffer is untouched";
  // Sticky on both ranks.
  EXPECT_EQ(w.comms[1]->allreduce(b.data(), b.data(), 100, DataType::kFloat32, ReduceOp::kSum).code(),
            ErrorCode::kMismatch);
  EXPECT_EQ(w.comms[0]->allreduce(a.data(), a.data(), 100, DataType::kFloat32, ReduceOp::kSum).code(),
            ErrorCode::kMismatch);
}

TEST(OperationLogCommunicator, DifferentCollectivesAreRefusedBeforeAnythingRuns) {
  LogWorld w = makeWorld(3, Config{});
  ASSERT_EQ(w.comms.size(), 3u);
  std::vector<float> x(24, 1.0f);
  ASSERT_TRUE(w.comms[0]->broadcast(x.data(), x.data(), 8, DataType::kFloat32, 2).isOk());
  const Status other_root = w.comms[1]->broadcast(x.data(), x.data(), 8, DataType::kFloat32, 1);
  EXPECT_EQ(other_root.code(), ErrorCode::kMismatch);
  EXPECT_TRUE(mentions(other_root,
                       "rank 1 called broadcast of 8 fp32 from rank 1, rank 0 called broadcast of 8 fp32 "
                       "from rank 2"))
      << other_root.message();
}

// A transport that cannot adopt a stop word still gets every comparison (its waits end at the deadline).
TEST(OperationLogCommunicator, ATransportWithoutStopWordsStillComparesEveryOperation) {
  LogWorld w = makeWorld(2, Config{}, /*refuse_stop_words=*/true);
  ASSERT_EQ(w.comms.size(), 2u);
  EXPECT_EQ(w.transports[0]->stop_word, nullptr);
  std::vector<float> a(8, 1.0f);
  ASSERT_TRUE(w.comms[0]->allreduce(a.data(), a.data(), 8, DataType::kFloat32, ReduceOp::kSum).isOk());
  EXPECT_EQ(w.comms[1]->allreduce(a.data(), a.data(), 8, DataType::kFloat32, ReduceOp::kMax).code(),
            ErrorCode::kMismatch);
}

TEST(OperationLogCommunicator, TheCheckCanBeTurnedOff) {
  Config off;
  off.check_operations = false;
  LogWorld w = makeWorld(2, off);
  ASSERT_EQ(w.comms.size(), 2u);
  EXPECT_EQ(w.transports[0]->stop_word, nullptr) << "no log, no stop word";
  std::vector<float> a(100, 1.0f);
  ASSERT_TRUE(w.comms[0]->allreduce(a.data(), a.data(), 100, DataType::kFloat32, ReduceOp::kSum).isOk());
  // The log does not compare: what refuses the call, if anything, is the transport (here the simulator's
  // engine, whose message is its own).
  const Status s = w.comms[1]->allreduce(a.data(), a.data(), 96, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_FALSE(mentions(s, "of the communicator differs between ranks")) << s.message();
  EXPECT_TRUE(mentions(s, "operation 0 differs between rank 0 and rank 1")) << s.message();
}

}  // namespace
}  // namespace peerreduce
