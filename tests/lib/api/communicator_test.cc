// The public C++ API (peerreduce/communicator.h) on the simulator: every rejected argument returns the
// right ErrorCode and a message naming the problem and leaves the receive buffer as it was; creation
// fails together (never hangs) when ranks disagree, a bootstrap or transport misbehaves, or the
// topology cannot carry the configured algorithm; explainSelection agrees with the cost model.
#include "peerreduce/communicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "allreduce_case.h"
#include "peerreduce/simulator.h"
#include "sim/sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

// Short enough that the tests expecting a timeout finish quickly, long enough for creation under
// sanitizers on a loaded 2-core machine.
constexpr milliseconds kCommunicatorShortTimeout{1500};
constexpr float kCommunicatorSentinel = -12345.25f;  // no test payload reduces to this

using peerreduce::testing::contains;

// What each rank's Communicator::create returned.
struct Creation {
  std::vector<Status> status;
  std::vector<std::unique_ptr<Communicator>> comms;
};

// Runs create(rank) on one thread per rank, as creation is collective.
Creation createOnThreads(int n, const std::function<StatusOr<std::unique_ptr<Communicator>>(int)>& create) {
  Creation out;
  out.status.resize(static_cast<std::size_t>(n));
  out.comms.resize(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto comm = create(r);
      if (comm.isOk()) {
        out.comms[static_cast<std::size_t>(r)] = std::move(comm).value();
      } else {
        out.status[static_cast<std::size_t>(r)] = comm.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

std::shared_ptr<sim::SimWorld> makeWorld(int n, sim::SimOptions options = {}) {
  auto world = sim::SimWorld::create(n, std::move(options));
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  return world.isOk() ? *world : nullptr;
}

Config shortTimeout(Config config = Config{}) {
  config.timeout = kCommunicatorShortTimeout;
  config.bootstrap_timeout = kCommunicatorShortTimeout;  // creation tests wait out ranks that never arrive
  return config;
}

// ---- creation: arguments checked before anything collective ---------------------------------------

TEST(CommunicatorCreate, WorldSizeOutsideOneTo64IsRejected) {
  auto world = makeWorld(1);
  for (int size : {0, -3, 65}) {
    auto comm = Communicator::create(0, size, world->bootstrap(0), world->transport(0));
    ASSERT_FALSE(comm.isOk()) << size;
    EXPECT_EQ(comm.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(comm.status().message(), "world size " + std::to_string(size) + " is outside 1..64"))
        << comm.status().message();
  }
}

TEST(CommunicatorCreate, RankOutsideTheWorldIsRejected) {
  auto world = makeWorld(2);
  for (int rank : {-1, 2, 64}) {
    auto comm = Communicator::create(rank, 2, world->bootstrap(0), world->transport(0));
    ASSERT_FALSE(comm.isOk()) << rank;
    EXPECT_EQ(comm.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(comm.status().message(), "rank " + std::to_string(rank) + " is outside 0..1"))
        << comm.status().message();
  }
}

TEST(CommunicatorCreate, NullBootstrapOrTransportIsRejected) {
  auto world = makeWorld(1);
  auto no_bootstrap = Communicator::create(0, 1, nullptr, world->transport(0));
  EXPECT_EQ(no_bootstrap.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(no_bootstrap.status().message(), "rank 0: bootstrap is null"));
  auto no_transport = Communicator::create(0, 1, world->bootstrap(0), nullptr);
  EXPECT_EQ(no_transport.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(no_transport.status().message(), "rank 0: transport is null"));
}

TEST(CommunicatorCreate, BootstrapOrTransportOfAnotherRankOrWorldIsRejected) {
  auto world = makeWorld(2);
  auto other = makeWorld(3);
  auto wrong_bootstrap = Communicator::create(0, 2, world->bootstrap(1), world->transport(0));
  EXPECT_EQ(wrong_bootstrap.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(wrong_bootstrap.status().message(), "rank 0 of 2 was given the bootstrap of rank 1 of 2"))
      << wrong_bootstrap.status().message();
  auto wrong_transport = Communicator::create(0, 2, world->bootstrap(0), world->transport(1));
  EXPECT_EQ(wrong_transport.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(wrong_transport.status().message(), "was given the transport of rank 1 of 2"));
  auto bigger_world = Communicator::create(0, 2, world->bootstrap(0), other->transport(0));
  EXPECT_TRUE(contains(bigger_world.status().message(), "was given the transport of rank 0 of 3"));
  auto bigger_bootstrap = Communicator::create(0, 2, other->bootstrap(0), world->transport(0));
  EXPECT_TRUE(contains(bigger_bootstrap.status().message(), "bootstrap of rank 0 of 3"));
}

// An invalid config is reported on every rank at once, before any rank waits for the others.
TEST(CommunicatorCreate, InvalidConfigFailsOnEveryRankWithoutWaiting) {
  auto world = makeWorld(2);
  Config config;
  config.scratch_bytes = kMinScratchBytes - 1;  // too small for anything, e.g. a ring's 2n slots
  const auto start = std::chrono::steady_clock::now();
  auto created = createOnThreads(
      2, [&](int r) { return Communicator::create(r, 2, world->bootstrap(r), world->transport(r), config); });
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.toString();
    EXPECT_TRUE(contains(s.message(), "(PEERREDUCE_SCRATCH_BYTES)")) << s.message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(kDefaultTimeoutMs / 2));
}

TEST(CommunicatorCreate, RanksWithDifferentConfigsAllFailWithMismatch) {
  auto world = makeWorld(3);
  auto created = createOnThreads(3, [&](int r) {
    Config config = shortTimeout();
    if (r == 2) config.algorithm = Algorithm::kRing;
    return Communicator::create(r, 3, world->bootstrap(r), world->transport(r), config);
  });
  for (int r = 0; r < 3; ++r) {
    const Status& s = created.status[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.code(), ErrorCode::kMismatch) << "rank " << r << ": " << s.toString();
    EXPECT_TRUE(contains(s.message(), "uses a different configuration")) << s.message();
    EXPECT_TRUE(contains(s.message(), "set the same PEERREDUCE_* values on every rank")) << s.message();
  }
}

// A rank that never calls create makes the others return kTimeout instead of hanging.
TEST(CommunicatorCreate, MissingRankMakesTheOthersTimeOut) {
  auto world = makeWorld(3);
  Config config;
  config.timeout = milliseconds(200);
  config.bootstrap_timeout = milliseconds(200);
  auto created = createOnThreads(
      2, [&](int r) { return Communicator::create(r, 3, world->bootstrap(r), world->transport(r), config); });
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.toString();
    EXPECT_TRUE(contains(s.message(), "2 to join")) << s.message();
  }
}

// ---- creation: misbehaving bootstraps and transports ----------------------------------------------

// Forwards to a real bootstrap, optionally claiming another rank or corrupting what it receives.
class LyingBootstrap : public Bootstrap {
 public:
  explicit LyingBootstrap(std::shared_ptr<Bootstrap> target) : target_(std::move(target)) {}
  int rank() const override { return claimed_rank >= 0 ? claimed_rank : target_->rank(); }
  int size() const override { return claimed_size > 0 ? claimed_size : target_->size(); }
  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all, milliseconds timeout) override {
    Status s = target_->allGather(mine, all, timeout);
    if (s.isOk() && corrupt_call == calls_) {
      // Every byte of the last rank's block: whatever its layout, it is no longer a valid record.
      const std::size_t block = all.size() / static_cast<std::size_t>(size());
      std::fill(all.end() - static_cast<std::ptrdiff_t>(block), all.end(), std::byte{0xff});
    }
    ++calls_;
    return s;
  }
  int claimed_rank = -1;
  int claimed_size = 0;
  int corrupt_call = -1;  // which allGather (0-based) to corrupt

 private:
  std::shared_ptr<Bootstrap> target_;
  int calls_ = 0;
};

// Forwards to a real transport, with one failure of choice.
class FaultyTransport : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  TransportIdentity identity() const override {
    TransportIdentity inner = TransportWrapper::identity();
    if (claimed_rank >= 0) inner.rank = claimed_rank;
    if (claimed_size > 0) inner.world_size = claimed_size;
    return inner;
  }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    if (throw_bad_alloc) throw std::bad_alloc();
    if (throw_error) throw std::runtime_error("transport bug");
    if (fail_open) return outOfMemoryError("no memory for the test");
    auto record = TransportWrapper::openSymmetric(bytes);
    if (record.isOk() && oversized_record) record->record.resize(kMaxPeerRecordBytes + 88);
    return record;
  }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    if (fail_connect) return corruptError("peer handle rejected by the test");
    return TransportWrapper::connectPeers(records);
  }
  Topology topology() const override { return wrong_topology ? Topology::fullMesh(7) : TransportWrapper::topology(); }

  int claimed_rank = -1;
  int claimed_size = 0;
  bool throw_bad_alloc = false;
  bool throw_error = false;
  bool fail_open = false;
  bool oversized_record = false;
  bool fail_connect = false;
  bool wrong_topology = false;
};

// Creates a 2-rank world where rank 1's transport is configured by `setup`.
Creation createWithFaultyRank1(const std::function<void(FaultyTransport&)>& setup, bool both = false) {
  auto world = makeWorld(2);
  std::vector<std::shared_ptr<FaultyTransport>> transports;
  for (int r = 0; r < 2; ++r) {
    transports.push_back(std::make_shared<FaultyTransport>(world->transport(r)));
    if (r == 1 || both) setup(*transports.back());
  }
  return createOnThreads(2, [&](int r) {
    return Communicator::create(r, 2, world->bootstrap(r), transports[static_cast<std::size_t>(r)], shortTimeout());
  });
}

// A rank that cannot open its memory still takes part, so every rank learns of it promptly.
TEST(CommunicatorCreate, SymmetricMemoryFailureOnOneRankFailsEveryRank) {
  auto created = createWithFaultyRank1([](FaultyTransport& t) { t.fail_open = true; });
  EXPECT_EQ(created.status[1].code(), ErrorCode::kOutOfMemory);
  EXPECT_EQ(created.status[1].message(), "opening symmetric memory on rank 1: no memory for the test");
  EXPECT_EQ(created.status[0].code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(created.status[0].message(), "rank 1 could not open its symmetric memory"));
}

TEST(CommunicatorCreate, OversizedPeerRecordIsAnInternalErrorOnThatRank) {
  auto created = createWithFaultyRank1([](FaultyTransport& t) { t.oversized_record = true; });
  EXPECT_EQ(created.status[1].code(), ErrorCode::kInternal);
  EXPECT_TRUE(contains(created.status[1].message(), "made a peer record of 600 bytes; the limit is 512"))
      << created.status[1].message();
  EXPECT_EQ(created.status[0].code(), ErrorCode::kUnavailable);
}

TEST(CommunicatorCreate, ConnectFailureOnOneRankFailsEveryRank) {
  auto created = createWithFaultyRank1([](FaultyTransport& t) { t.fail_connect = true; });
  EXPECT_EQ(created.status[1].code(), ErrorCode::kCorrupt);
  EXPECT_EQ(created.status[0].code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(created.status[0].message(), "rank 1 failed to map its peers' memory; see that rank's error"))
      << created.status[0].message();
}

TEST(CommunicatorCreate, TransportTopologyOfTheWrongSizeIsAnInternalError) {
  auto created = createWithFaultyRank1([](FaultyTransport& t) { t.wrong_topology = true; }, /*both=*/true);
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kInternal) << s.toString();
    EXPECT_TRUE(contains(s.message(), "reports a topology of 7 ranks for a world of 2")) << s.message();
  }
}

// Two ranks both claiming rank 0 (with matching bootstrap and transport) are caught by the exchange.
TEST(CommunicatorCreate, TwoRanksClaimingTheSameRankFailWithMismatch) {
  auto world = makeWorld(2);
  auto created = createOnThreads(2, [&](int r) {
    auto bootstrap = std::make_shared<LyingBootstrap>(world->bootstrap(r));
    auto transport = std::make_shared<FaultyTransport>(world->transport(r));
    bootstrap->claimed_rank = 0;
    transport->claimed_rank = 0;
    return Communicator::create(0, 2, bootstrap, transport, shortTimeout());
  });
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kMismatch) << s.toString();
    EXPECT_TRUE(contains(s.message(), "rank 1 calls itself rank 0; every rank must pass its own rank")) << s.message();
  }
}

// A rank that believes in a bigger world (its bootstrap and transport agree with it) is caught by the
// first exchange: the others see its record, it cannot complete the gather, and nobody hangs.
TEST(CommunicatorCreate, RanksDisagreeingOnTheWorldSizeFail) {
  auto world = makeWorld(2);
  auto created = createOnThreads(2, [&](int r) {
    auto bootstrap = std::make_shared<LyingBootstrap>(world->bootstrap(r));
    auto transport = std::make_shared<FaultyTransport>(world->transport(r));
    const int size = r == 1 ? 3 : 2;
    bootstrap->claimed_size = size;
    transport->claimed_size = size;
    return Communicator::create(r, size, bootstrap, transport, shortTimeout());
  });
  EXPECT_EQ(created.status[0].code(), ErrorCode::kMismatch) << created.status[0].toString();
  EXPECT_TRUE(contains(created.status[0].message(), "rank 1 was created with world size 3, rank 0 with 2"))
      << created.status[0].message();
  EXPECT_FALSE(created.status[1].isOk());
}

// No exception escapes create(): one thrown by a transport becomes a Status.
TEST(CommunicatorCreate, ExceptionsFromTheTransportBecomeErrors) {
  auto world = makeWorld(1);
  auto throwing = std::make_shared<FaultyTransport>(world->transport(0));
  throwing->throw_bad_alloc = true;
  auto oom = Communicator::create(0, 1, world->bootstrap(0), throwing);
  EXPECT_EQ(oom.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_EQ(oom.status().message(), "rank 0: out of host memory while creating the communicator");
  throwing->throw_bad_alloc = false;
  throwing->throw_error = true;
  auto bug = Communicator::create(0, 1, world->bootstrap(0), throwing);
  EXPECT_EQ(bug.status().code(), ErrorCode::kInternal);
  EXPECT_EQ(bug.status().message(), "rank 0: unexpected exception while creating the communicator: transport bug");
}

// A decorator that overrides nothing (what a fault injector starts from) must behave exactly like the
// transport it wraps: results, synchronize and asyncError all pass through. And abort() reaches the
// target: the aborted rank's next operation fails with kAborted and its peer's with an error, promptly.
TEST(CommunicatorTransportWrapper, ForwardsEverythingToItsTarget) {
  auto world = makeWorld(2);
  std::vector<std::shared_ptr<FaultyTransport>> transports;
  for (int r = 0; r < 2; ++r) transports.push_back(std::make_shared<FaultyTransport>(world->transport(r)));
  auto created = createOnThreads(2, [&](int r) {
    return Communicator::create(r, 2, world->bootstrap(r), transports[static_cast<std::size_t>(r)], shortTimeout());
  });
  ASSERT_TRUE(created.status[0].isOk() && created.status[1].isOk()) << created.status[0].toString();
  EXPECT_EQ(transports[0]->name(), "simulator");
  std::vector<std::int32_t> data[2] = {std::vector<std::int32_t>(100, 3), std::vector<std::int32_t>(100, 4)};
  std::vector<Status> synced(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto& comm = *created.comms[static_cast<std::size_t>(r)];
      Status s = comm.allreduce(data[r].data(), data[r].data(), 100, DataType::kInt32, ReduceOp::kProd);
      synced[static_cast<std::size_t>(r)] = s.isOk() ? comm.synchronize() : s;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(synced[static_cast<std::size_t>(r)].isOk()) << synced[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(data[r], std::vector<std::int32_t>(100, 12)) << "rank " << r;
    EXPECT_TRUE(created.comms[static_cast<std::size_t>(r)]->asyncError().isOk());
  }

  transports[1]->abort();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(created.comms[static_cast<std::size_t>(r)]
                    ->allreduce(data[r].data(), data[r].data(), 100, DataType::kInt32, ReduceOp::kSum)
                    .isOk());
  }
  EXPECT_FALSE(world->runUntilIdle().isOk());
  EXPECT_EQ(created.comms[1]->asyncError().code(), ErrorCode::kAborted) << created.comms[1]->asyncError().toString();
  EXPECT_FALSE(created.comms[0]->asyncError().isOk()) << "the peer of an aborted rank cannot succeed";
}

// A creation record that arrives corrupted is reported as an incompatible peer, and the rank that
// sent it, left waiting for the next exchange, times out rather than hanging.
TEST(CommunicatorCreate, CorruptCreationRecordIsAMismatchAndNobodyHangs) {
  auto world = makeWorld(2);
  auto created = createOnThreads(2, [&](int r) {
    auto bootstrap = std::make_shared<LyingBootstrap>(world->bootstrap(r));
    if (r == 0) bootstrap->corrupt_call = 0;
    return Communicator::create(r, 2, bootstrap, world->transport(r), shortTimeout());
  });
  EXPECT_EQ(created.status[0].code(), ErrorCode::kMismatch) << created.status[0].toString();
  EXPECT_TRUE(contains(created.status[0].message(), "rank 1 runs an incompatible peerreduce"))
      << created.status[0].message();
  EXPECT_EQ(created.status[1].code(), ErrorCode::kTimeout) << created.status[1].toString();
}

TEST(CommunicatorCreate, CorruptSymmetricMemoryRecordIsReported) {
  auto world = makeWorld(2);
  auto created = createOnThreads(2, [&](int r) {
    auto bootstrap = std::make_shared<LyingBootstrap>(world->bootstrap(r));
    if (r == 0) bootstrap->corrupt_call = 1;
    return Communicator::create(r, 2, bootstrap, world->transport(r), shortTimeout());
  });
  EXPECT_FALSE(created.status[0].isOk());
  EXPECT_TRUE(contains(created.status[0].message(), "rank 1")) << created.status[0].message();
  EXPECT_FALSE(created.status[1].isOk()) << "rank 1 must not succeed alone";
}

// ---- creation: topologies ---------------------------------------------------------------------------

// Four ranks on a bidirectional ring of links: only the ring algorithm can run.
sim::SimOptions ringTopology(int n) {
  sim::SimOptions options;
  options.topology = Topology(n);
  for (int a = 0; a < n; ++a) options.topology.setBidirectional(a, (a + 1) % n, Topology::defaultNvLink());
  return options;
}

// Bug: a forced algorithm that the topology cannot carry was reported as kUnavailable "no allreduce
// algorithm can run on this topology" (it is the only candidate when forced), though the ring could
// run there; the configuration is what is wrong, and the message must say so.
TEST(CommunicatorCreate, ForcedAlgorithmTheTopologyCannotCarryIsAnInvalidConfiguration) {
  auto world = makeWorld(4, ringTopology(4));
  Config config = shortTimeout();
  config.algorithm = Algorithm::kOneShot;
  auto created = createOnThreads(
      4, [&](int r) { return Communicator::create(r, 4, world->bootstrap(r), world->transport(r), config); });
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.toString();
    EXPECT_TRUE(contains(s.message(), "the configured algorithm one-shot cannot run on this topology")) << s.message();
    EXPECT_TRUE(contains(s.message(), "unset PEERREDUCE_ALGO or pick another")) << s.message();
  }
}

TEST(CommunicatorCreate, TopologyWithoutLinksCannotRunAnyAlgorithm) {
  sim::SimOptions options;
  options.topology = Topology(2);
  auto world = makeWorld(2, options);
  auto created = createOnThreads(
      2, [&](int r) { return Communicator::create(r, 2, world->bootstrap(r), world->transport(r), shortTimeout()); });
  for (const Status& s : created.status) {
    EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.toString();
    // The world cannot be connected at all: the error names the rank that cannot be reached.
    EXPECT_TRUE(contains(s.message(), "rank 1 cannot be reached from rank 0")) << s.message();
    EXPECT_TRUE(contains(s.message(), "2 directed links missing (0-1,1-0)")) << s.message();
  }
}

// On a ring of links the automatic choice leaves out the algorithms that need missing links (one-shot
// and two-shot read every peer) and stays correct.
TEST(CommunicatorCreate, AutomaticSelectionOnARingTopologyAvoidsMissingLinks) {
  auto cluster = sim::SimCluster::create(4, ringTopology(4), shortTimeout());
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  auto report = (*cluster)->comm(0).explainSelection(1000, DataType::kFloat32);
  ASSERT_TRUE(report.isOk());
  std::vector<Algorithm> listed;
  for (const auto& c : report->candidates) listed.push_back(c.algorithm);
  EXPECT_NE(std::find(listed.begin(), listed.end(), Algorithm::kRing), listed.end()) << "the ring fits a ring";
  for (Algorithm all_to_all : {Algorithm::kOneShot, Algorithm::kTwoShot}) {
    EXPECT_EQ(std::find(listed.begin(), listed.end(), all_to_all), listed.end()) << algorithmName(all_to_all);
    EXPECT_NE(report->chosen, all_to_all);
  }
  std::vector<float> data[4];
  for (int r = 0; r < 4; ++r) {
    data[r].assign(333, static_cast<float>(r + 1));
    ASSERT_TRUE(
        (*cluster)->comm(r).allreduce(data[r].data(), data[r].data(), 333, DataType::kFloat32, ReduceOp::kSum).isOk());
  }
  ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
  for (int r = 0; r < 4; ++r) EXPECT_EQ(data[r], std::vector<float>(333, 10.0f)) << "rank " << r;
}

// ---- allreduce arguments ---------------------------------------------------------------------------

class CommunicatorAllreduce : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = sim::SimCluster::create(2, {}, shortTimeout());
    ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
    cluster_ = std::move(cluster).value();
    send_.assign(kCount, 1.5f);
    recv_.assign(kCount, kCommunicatorSentinel);
  }

  Communicator& comm() { return cluster_->comm(0); }

  // The call must fail with `code` and a message containing `says`, and nothing may have been
  // written, then or after running everything that was enqueued.
  void expectRejected(const Status& status, ErrorCode code, const std::string& says) {
    EXPECT_EQ(status.code(), code) << status.toString();
    EXPECT_TRUE(contains(status.message(), "allreduce on rank 0: ")) << status.message();
    EXPECT_TRUE(contains(status.message(), says)) << "expected '" << says << "' in: " << status.message();
    ASSERT_TRUE(cluster_->runUntilIdle().isOk());
    EXPECT_EQ(cluster_->world().stats().operations, 0u) << "a rejected call enqueued work";
    EXPECT_EQ(recv_, std::vector<float>(kCount, kCommunicatorSentinel)) << "recv changed";
    EXPECT_EQ(send_, std::vector<float>(kCount, 1.5f)) << "send changed";
  }

  static constexpr std::size_t kCount = 64;
  std::unique_ptr<sim::SimCluster> cluster_;
  std::vector<float> send_;
  std::vector<float> recv_;
};

TEST_F(CommunicatorAllreduce, NullSendOrRecvWithACountIsRejected) {
  expectRejected(comm().allreduce(nullptr, recv_.data(), kCount, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "send buffer is null with count 64");
  expectRejected(comm().allreduce(send_.data(), nullptr, kCount, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "recv buffer is null with count 64");
}

TEST_F(CommunicatorAllreduce, CountWhoseBytesOverflowIsRejected) {
  const std::size_t count = std::numeric_limits<std::size_t>::max() / 2;
  expectRejected(comm().allreduce(send_.data(), recv_.data(), count, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "x 4-byte fp32 overflows the address space");
}

TEST_F(CommunicatorAllreduce, BufferRunningPastTheAddressSpaceIsRejected) {
  // Never dereferenced: rejected from its address alone.
  const auto* near_end = reinterpret_cast<const void*>(std::numeric_limits<std::uintptr_t>::max() - 15);
  expectRejected(comm().allreduce(near_end, recv_.data(), 8, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "runs past the end of the address space");
}

TEST_F(CommunicatorAllreduce, UnknownDtypeOrOpIsRejected) {
  expectRejected(comm().allreduce(send_.data(), recv_.data(), kCount, static_cast<DataType>(42), ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "unknown dtype value 42 (valid: 0..11");
  expectRejected(comm().allreduce(send_.data(), recv_.data(), kCount, DataType::kFloat32, static_cast<ReduceOp>(42)),
                 ErrorCode::kInvalidArgument, "unknown op value 42 (valid: 0..4");
  // Even with count 0, where nothing would be read: an unknown enum is a caller bug worth reporting.
  expectRejected(comm().allreduce(nullptr, nullptr, 0, static_cast<DataType>(-1), ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "unknown dtype value -1");
}

TEST_F(CommunicatorAllreduce, MisalignedBuffersAreRejectedNamingWhichOne) {
  const auto* send_bytes = reinterpret_cast<const unsigned char*>(send_.data());
  auto* recv_bytes = reinterpret_cast<unsigned char*>(recv_.data());
  expectRejected(comm().allreduce(send_bytes + 2, recv_.data(), 8, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "send buffer");
  expectRejected(comm().allreduce(send_.data(), recv_bytes + 1, 8, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "recv buffer");
  expectRejected(comm().allreduce(send_.data(), recv_bytes + 4, 8, DataType::kFloat64, ReduceOp::kMax),
                 ErrorCode::kInvalidArgument, "is not aligned to its 8-byte fp64 elements");
}

TEST_F(CommunicatorAllreduce, OverlappingButNotIdenticalBuffersAreRejected) {
  expectRejected(comm().allreduce(recv_.data(), recv_.data() + 1, kCount / 2, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "overlap over 128 bytes without being identical");
  expectRejected(comm().allreduce(recv_.data() + 3, recv_.data(), kCount / 2, DataType::kFloat32, ReduceOp::kSum),
                 ErrorCode::kInvalidArgument, "overlap");
}

TEST_F(CommunicatorAllreduce, CountZeroIsANoOpEvenWithNullBuffers) {
  EXPECT_TRUE(comm().allreduce(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum).isOk());
  EXPECT_TRUE(comm().allreduce(send_.data(), recv_.data(), 0, DataType::kInt8, ReduceOp::kAvg).isOk());
  ASSERT_TRUE(cluster_->runUntilIdle().isOk());
  EXPECT_EQ(cluster_->world().stats().operations, 0u) << "count 0 enqueued work";
  EXPECT_EQ(recv_, std::vector<float>(kCount, kCommunicatorSentinel));
  EXPECT_TRUE(comm().asyncError().isOk());
}

// Adjacent (touching but disjoint) buffers are fine, and the rejected calls before left no trace.
TEST_F(CommunicatorAllreduce, AdjacentBuffersWorkAndAsyncErrorStaysOk) {
  std::vector<float> both[2];
  for (int r = 0; r < 2; ++r) {
    both[r].assign(2 * 16, static_cast<float>(r + 1));  // [send | recv] back to back
    ASSERT_TRUE(cluster_->comm(r)
                    .allreduce(both[r].data(), both[r].data() + 16, 16, DataType::kFloat32, ReduceOp::kSum)
                    .isOk());
  }
  ASSERT_TRUE(cluster_->runUntilIdle().isOk());
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(cluster_->comm(r).asyncError().isOk());
    EXPECT_EQ(std::vector<float>(both[r].begin() + 16, both[r].end()), std::vector<float>(16, 3.0f));
    EXPECT_EQ(std::vector<float>(both[r].begin(), both[r].begin() + 16), std::vector<float>(16, float(r + 1)));
  }
  EXPECT_EQ(cluster_->comm(1).rank(), 1);
  EXPECT_EQ(cluster_->comm(1).size(), 2);
  EXPECT_EQ(cluster_->comm(1).config().timeout, kCommunicatorShortTimeout);
  EXPECT_EQ(cluster_->comm(1).topology().worldSize(), 2);
}

// ---- scratch and segmenting -------------------------------------------------------------------------

// The smallest scratch allowed carries any forced algorithm at any size, in segments, correctly.
TEST(CommunicatorScratch, MinimalScratchSegmentsLargeMessagesForEveryForcedAlgorithm) {
  for (int a = 1; a < kBuiltAlgorithmCount; ++a) {
    const auto algorithm = static_cast<Algorithm>(a);
    Config config = shortTimeout();
    config.algorithm = algorithm;
    config.scratch_bytes = kMinScratchBytes;
    auto world = testing::makeSimTestWorld(3, {}, config);
    ASSERT_TRUE(world.isOk()) << world.status().toString();
    testing::AllreduceCase c;
    c.world_size = 3;
    c.count = 40000;  // 160 KB of fp32: several segments of 64 KiB scratch
    c.algorithm = algorithm;
    c.op = ReduceOp::kAvg;
    const auto outcome = testing::runAllreduceCase(**world, c);
    EXPECT_TRUE(outcome.ok) << outcome.problem;
    auto report = (*world)->comm(0).explainSelection(c.count, c.dtype);
    ASSERT_TRUE(report.isOk());
    EXPECT_TRUE(report->forced);
    EXPECT_EQ(report->chosen, algorithm);
    // Only variants of the forced algorithm are candidates (a tree comes in two pipelines).
    ASSERT_FALSE(report->candidates.empty());
    for (const auto& candidate : report->candidates) EXPECT_EQ(candidate.algorithm, algorithm);
    EXPECT_GT(report->candidates[0].segments, 1) << algorithmName(algorithm);
  }
}

// ---- explainSelection --------------------------------------------------------------------------------

TEST(CommunicatorExplain, AutomaticChoiceIsTheCheapestCandidateAndEveryAlgorithmIsListed) {
  auto cluster = sim::SimCluster::create(4, {}, shortTimeout());
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  for (std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{288}, std::size_t{1} << 18, std::size_t{3} << 24}) {
    auto report = (*cluster)->comm(2).explainSelection(count, DataType::kFloat32);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_FALSE(report->forced);
    std::set<Algorithm> listed;
    for (const auto& candidate : report->candidates) listed.insert(candidate.algorithm);
    // Every algorithm fits but the copy-engine two-shot, which is a candidate only when forced.
    EXPECT_EQ(listed.count(Algorithm::kCopyEngineTwoShot), 0u);
    ASSERT_EQ(listed.size(), static_cast<std::size_t>(kBuiltAlgorithmCount - 2)) << "every automatic algorithm fits";
    EXPECT_TRUE(report->excluded.empty());
    EXPECT_TRUE(std::is_sorted(
        report->candidates.begin(), report->candidates.end(),
        [](const AlgorithmEstimate& a, const AlgorithmEstimate& b) { return a.predicted_us < b.predicted_us; }));
    // Every rank answers the same.
    auto other = (*cluster)->comm(0).explainSelection(count, DataType::kFloat32);
    ASSERT_TRUE(other.isOk());
    EXPECT_EQ(other->chosen, report->chosen);
  }
  // At a bucket middle the table and the candidates' ranking agree (the table is built there).
  auto middle = (*cluster)->comm(0).explainSelection(1152 / 4, DataType::kFloat32);
  ASSERT_TRUE(middle.isOk());
  EXPECT_EQ(middle->chosen, middle->candidates.front().algorithm);
}

TEST(CommunicatorExplain, UnknownDtypeIsRejected) {
  auto cluster = sim::SimCluster::create(1, {}, shortTimeout());
  ASSERT_TRUE(cluster.isOk());
  // The first value past the last type (fp8e5m2 = 11).
  auto report = (*cluster)->comm(0).explainSelection(10, static_cast<DataType>(kDataTypeCount));
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(report.status().message(), "unknown dtype value 12"));
}

// Bug: explainSelection multiplied count by the element size unchecked, so for a count allreduce()
// rejects as overflowing it reported the choice for the wrapped (tiny) byte count.
TEST(CommunicatorExplain, CountWhoseBytesOverflowIsRejectedLikeAllreduce) {
  auto cluster = sim::SimCluster::create(2, {}, shortTimeout());
  ASSERT_TRUE(cluster.isOk());
  const std::size_t count = std::numeric_limits<std::size_t>::max() / 4 + 1;  // x 8 bytes wraps to 2^64 / 2
  auto report = (*cluster)->comm(0).explainSelection(count, DataType::kFloat64);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(report.status().message(), "overflows the address space")) << report.status().message();
  EXPECT_TRUE(
      (*cluster)->comm(0).explainSelection(std::numeric_limits<std::size_t>::max() / 8, DataType::kFloat64).isOk());
}

}  // namespace
}  // namespace peerreduce
