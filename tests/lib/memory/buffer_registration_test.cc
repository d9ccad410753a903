// User-buffer registration through the Communicator, on the simulator: collective registerBuffer,
// records naming the allocation base plus an offset, the cache by base, deregistration, release with
// the communicator, and every way a peer's record can be wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"
#include "sim_transport.h"

namespace peerreduce::testing {
namespace {

constexpr int kBufferRegistrationRanks = 3;
constexpr std::size_t kBufferRegistrationMiB = std::size_t{1} << 20;

Config smallRegistrationConfig() {
  Config config;
  config.scratch_bytes = 1 * kBufferRegistrationMiB;
  config.memory.pool_bytes = 2 * kBufferRegistrationMiB;
  return config;
}

// Runs fn(rank) on one thread per rank: registration is collective, through the in-process bootstrap.
void onEveryRank(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

struct World {
  std::shared_ptr<sim::SimWorld> sim;
  std::vector<std::unique_ptr<Communicator>> comms;

  sim::SimTransport& transport(int r) { return dynamic_cast<sim::SimTransport&>(*sim->transport(r)); }
  sim::SimBufferRegistry& registry() { return transport(0).buffers(); }
};

World makeWorld(int n = kBufferRegistrationRanks,
                const std::function<std::shared_ptr<Transport>(std::shared_ptr<Transport>)>& wrap = nullptr) {
  World world;
  auto sim = sim::SimWorld::create(n, {});
  EXPECT_TRUE(sim.isOk()) << sim.status().toString();
  world.sim = std::move(sim).value();
  world.comms.resize(static_cast<std::size_t>(n));
  onEveryRank(n, [&](int r) {
    std::shared_ptr<Transport> transport = world.sim->transport(r);
    if (wrap) transport = wrap(transport);
    auto comm = Communicator::create(r, n, world.sim->bootstrap(r), transport, smallRegistrationConfig());
    EXPECT_TRUE(comm.isOk()) << "rank " << r << ": " << comm.status().toString();
    if (comm.isOk()) world.comms[static_cast<std::size_t>(r)] = std::move(comm).value();
  });
  return world;
}

// Each rank's call of registerBuffer(ptrs[r] , bytes[r]), run collectively.
std::vector<StatusOr<RegisteredBuffer>> registerOnEveryRank(World& world, const std::vector<const void*>& ptrs,
                                                            const std::vector<std::size_t>& bytes) {
  std::vector<StatusOr<RegisteredBuffer>> out(ptrs.size(), internalError("not run"));
  onEveryRank(static_cast<int>(ptrs.size()), [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    out[i] = world.comms[i]->registerBuffer(ptrs[i], bytes[i]);
  });
  return out;
}

std::vector<Status> deregisterOnEveryRank(World& world, const std::vector<RegisteredBuffer>& regs) {
  std::vector<Status> out(regs.size());
  onEveryRank(static_cast<int>(regs.size()), [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    out[i] = world.comms[i]->deregisterBuffer(regs[i]);
  });
  return out;
}

std::vector<RegisteredBuffer> values(const std::vector<StatusOr<RegisteredBuffer>>& regs) {
  std::vector<RegisteredBuffer> out;
  for (const auto& reg : regs) {
    EXPECT_TRUE(reg.isOk()) << reg.status().toString();
    out.push_back(reg.isOk() ? *reg : RegisteredBuffer{});
  }
  return out;
}

// One buffer per rank filled with its rank, so a peer view shows whose memory it reaches.
struct RankBuffers {
  std::vector<std::vector<std::uint32_t>> data;
  explicit RankBuffers(std::size_t words) {
    for (int r = 0; r < kBufferRegistrationRanks; ++r)
      data.emplace_back(words, 0xA0000000u + static_cast<std::uint32_t>(r));
  }
  const void* ptr(int r, std::size_t byte_offset = 0) const {
    return reinterpret_cast<const std::byte*>(data[static_cast<std::size_t>(r)].data()) + byte_offset;
  }
  std::vector<const void*> ptrs(std::size_t byte_offset = 0) const {
    std::vector<const void*> out;
    for (int r = 0; r < kBufferRegistrationRanks; ++r) out.push_back(ptr(r, byte_offset));
    return out;
  }
};

TEST(BufferRegistration, EveryRankOpensEveryPeersBuffer) {
  World world = makeWorld();
  RankBuffers buffers(1024);
  const auto regs =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 4096)));
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    const RegisteredBuffer& reg = regs[static_cast<std::size_t>(r)];
    ASSERT_TRUE(reg.valid());
    // Untracked host memory is its own allocation: base = the buffer, offset 0.
    EXPECT_EQ(reg.allocationBase(), buffers.ptr(r));
    EXPECT_EQ(reg.offset(), 0u);
    for (int p = 0; p < kBufferRegistrationRanks; ++p) {
      auto view = reg.peer(p);
      ASSERT_TRUE(view.isOk()) << view.status().toString();
      EXPECT_EQ(view->peer, p);
      EXPECT_EQ(view->data, buffers.ptr(p));
      EXPECT_EQ(view->bytes, 4096u);
      auto word = reg.peerBytes(p, 4092, 4);
      ASSERT_TRUE(word.isOk()) << word.status().toString();
      std::uint32_t value = 0;
      std::memcpy(&value, word->data(), 4);
      EXPECT_EQ(value, 0xA0000000u + static_cast<std::uint32_t>(p));
    }
    EXPECT_EQ(world.comms[static_cast<std::size_t>(r)]->registrationStats().exports, 1u);
    EXPECT_EQ(world.registry().liveExports(r), 1u);
  }
  // Bounds of the views.
  EXPECT_EQ(regs[0].peerBytes(1, 4093, 4).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(regs[0].peerBytes(1, 1, SIZE_MAX).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(regs[0].peer(kBufferRegistrationRanks).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(regs[0].peer(-1).status().code(), ErrorCode::kInvalidArgument);
  for (const Status& s : deregisterOnEveryRank(world, regs)) EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(BufferRegistration, RecordsNameTheAllocationBasePlusAnOffsetAndAreCachedByBase) {
  World world = makeWorld();
  RankBuffers buffers(16384);  // 64 KiB per rank, declared as one allocation
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    ASSERT_TRUE(world.registry().trackAllocation(r, buffers.ptr(r), 65536).isOk());
  }
  const auto first =
      values(registerOnEveryRank(world, buffers.ptrs(4096), std::vector<std::size_t>(kBufferRegistrationRanks, 1024)));
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    const RegisteredBuffer& reg = first[static_cast<std::size_t>(r)];
    EXPECT_EQ(reg.allocationBase(), buffers.ptr(r));
    EXPECT_EQ(reg.allocationBytes(), 65536u);
    EXPECT_EQ(reg.offset(), 4096u);
    for (int p = 0; p < kBufferRegistrationRanks; ++p)
      EXPECT_EQ(reg.peer(p)->data, buffers.ptr(p, 4096)) << r << " -> " << p;
  }
  // Another range of the same allocation, and the whole allocation: both served by the first export.
  const auto second =
      values(registerOnEveryRank(world, buffers.ptrs(8192), std::vector<std::size_t>(kBufferRegistrationRanks, 512)));
  const auto whole =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 65536)));
  const auto again =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 65536)));
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    const RegistrationStats stats = world.comms[static_cast<std::size_t>(r)]->registrationStats();
    EXPECT_EQ(stats.exports, 1u);
    EXPECT_EQ(stats.hits, 3u);
    EXPECT_EQ(stats.entries, 1u);
    EXPECT_EQ(world.registry().liveExports(r), 1u);
    EXPECT_EQ(second[static_cast<std::size_t>(r)].peer((r + 1) % kBufferRegistrationRanks)->data,
              buffers.ptr((r + 1) % kBufferRegistrationRanks, 8192));
    EXPECT_EQ(whole[static_cast<std::size_t>(r)].offset(), 0u);
  }
  // The export lives until its last registration ends.
  for (const auto* set : {&first, &second, &whole}) {
    for (const Status& s : deregisterOnEveryRank(world, *set)) EXPECT_TRUE(s.isOk()) << s.toString();
    for (int r = 0; r < kBufferRegistrationRanks; ++r) EXPECT_EQ(world.registry().liveExports(r), 1u);
  }
  for (const Status& s : deregisterOnEveryRank(world, again)) EXPECT_TRUE(s.isOk()) << s.toString();
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    EXPECT_EQ(world.registry().liveExports(r), 0u);
    EXPECT_EQ(world.comms[static_cast<std::size_t>(r)]->registrationStats().releases, 1u);
  }
}

TEST(BufferRegistration, DeregisterEndsEveryCopyAndRefusesASecondTime) {
  World world = makeWorld();
  RankBuffers buffers(256);
  const auto regs =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 1024)));
  const RegisteredBuffer copy = regs[1];
  for (const Status& s : deregisterOnEveryRank(world, regs)) EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_FALSE(copy.valid());
  EXPECT_EQ(copy.peer(0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(copy.peer(0).status().message().find("registration has ended"), std::string::npos);
  for (int r = 0; r < kBufferRegistrationRanks; ++r) EXPECT_EQ(world.registry().liveExports(r), 0u);
  // A second deregistration is refused on every rank, naming the problem.
  for (const Status& s : deregisterOnEveryRank(world, regs)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("not a live registration"), std::string::npos) << s.toString();
  }
  // An empty handle on one rank only: that rank says why, the others name it, nothing changes.
  const auto live =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 1024)));
  std::vector<RegisteredBuffer> mixed = live;
  mixed[2] = RegisteredBuffer{};
  const auto statuses = deregisterOnEveryRank(world, mixed);
  EXPECT_EQ(statuses[2].code(), ErrorCode::kInvalidArgument);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[static_cast<std::size_t>(r)].code(), ErrorCode::kUnavailable);
    EXPECT_NE(statuses[static_cast<std::size_t>(r)].message().find("rank 2"), std::string::npos);
  }
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    EXPECT_TRUE(live[static_cast<std::size_t>(r)].valid());
    EXPECT_EQ(world.registry().liveExports(r), 1u);
  }
  for (const Status& s : deregisterOnEveryRank(world, live)) EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(BufferRegistration, RegistrationsEndWithTheCommunicator) {
  World world = makeWorld();
  RankBuffers buffers(256);
  auto regs =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 1024)));
  auto more =
      values(registerOnEveryRank(world, buffers.ptrs(64), std::vector<std::size_t>(kBufferRegistrationRanks, 64)));
  for (int r = 0; r < kBufferRegistrationRanks; ++r) EXPECT_EQ(world.registry().liveExports(r), 1u);
  world.comms.clear();  // no deregisterBuffer: destruction releases everything (ASan checks the rest)
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    EXPECT_EQ(world.registry().liveExports(r), 0u);
    EXPECT_FALSE(regs[static_cast<std::size_t>(r)].valid());
    EXPECT_FALSE(more[static_cast<std::size_t>(r)].valid());
    EXPECT_EQ(regs[static_cast<std::size_t>(r)].peer(0).status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(regs[static_cast<std::size_t>(r)].data(), buffers.ptr(r));  // plain facts stay readable
  }
}

TEST(BufferRegistration, AFailureOnOneRankFailsEveryRankAndLeavesNothingBehind) {
  World world = makeWorld();
  RankBuffers buffers(256);
  std::vector<const void*> ptrs = buffers.ptrs();
  ptrs[1] = nullptr;
  const auto regs = registerOnEveryRank(world, ptrs, std::vector<std::size_t>(kBufferRegistrationRanks, 1024));
  EXPECT_EQ(regs[1].status().code(), ErrorCode::kInvalidArgument) << regs[1].status().toString();
  for (int r : {0, 2}) {
    const Status& s = regs[static_cast<std::size_t>(r)].status();
    EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.toString();
    EXPECT_NE(s.message().find("rank 1 could not register"), std::string::npos) << s.toString();
  }
  for (int r = 0; r < kBufferRegistrationRanks; ++r) {
    EXPECT_EQ(world.registry().liveExports(r), 0u);
    EXPECT_EQ(world.comms[static_cast<std::size_t>(r)]->registrationStats().entries, 0u);
  }
  // The communicators still register afterwards.
  const auto ok =
      values(registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 1024)));
  for (const Status& s : deregisterOnEveryRank(world, ok)) EXPECT_TRUE(s.isOk()) << s.toString();
}

// A transport without the buffer-sharing capability: registration is kUnsupported on every rank.
class NoRegistrationTransport : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  TransportCapabilities capabilities() override {
    TransportCapabilities inner = TransportWrapper::capabilities();
    inner.buffer_sharing = nullptr;
    return inner;
  }
};

// The transport's buffer-sharing capability (the simulator has it).
BufferSharing& sharingOf(Transport& transport) {
  BufferSharing* sharing = transport.capabilities().buffer_sharing;
  if (sharing == nullptr) throw std::logic_error(transport.name() + " has no buffer sharing");
  return *sharing;
}

TEST(BufferRegistration, TransportsWithoutTheHooksSayUnsupported) {
  World world = makeWorld(kBufferRegistrationRanks, [](std::shared_ptr<Transport> t) {
    return std::make_shared<NoRegistrationTransport>(std::move(t));
  });
  RankBuffers buffers(256);
  const auto regs =
      registerOnEveryRank(world, buffers.ptrs(), std::vector<std::size_t>(kBufferRegistrationRanks, 1024));
  for (const auto& reg : regs) {
    EXPECT_EQ(reg.status().code(), ErrorCode::kUnsupported) << reg.status().toString();
    EXPECT_NE(reg.status().message().find("cannot register user buffers"), std::string::npos)
        << reg.status().toString();
  }
  NoRegistrationTransport bare(world.sim->transport(0));
  EXPECT_EQ(bare.capabilities().buffer_sharing, nullptr);
  EXPECT_NE(bare.capabilities().time_marks, nullptr) << "only the capability it drops is gone";
}

TEST(BufferRegistration, TransportWrapperForwardsTheHooks) {
  World world = makeWorld();
  TransportWrapper wrapper(world.sim->transport(1));
  const TransportCapabilities inner = world.sim->transport(1)->capabilities();
  const TransportCapabilities forwarded = wrapper.capabilities();
  EXPECT_EQ(forwarded.buffer_sharing, inner.buffer_sharing);
  EXPECT_EQ(forwarded.time_marks, inner.time_marks);
  EXPECT_EQ(forwarded.batch_submit, inner.batch_submit);
  BufferSharing& shared = sharingOf(wrapper);
  RankBuffers buffers(64);
  auto record = shared.exportBuffer(buffers.ptr(1), 256);
  ASSERT_TRUE(record.isOk()) << record.status().toString();
  auto view = sharingOf(*world.sim->transport(0)).openPeerBuffer(1, *record, 16, 32);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  EXPECT_EQ(view->data, buffers.ptr(1, 16));
  shared.releaseBuffer(buffers.ptr(1), 256);
  EXPECT_EQ(world.registry().liveExports(1), 0u);
  auto allocation = shared.allocationOf(buffers.ptr(1, 8), 8);
  ASSERT_TRUE(allocation.isOk());
  EXPECT_EQ(allocation->base, buffers.ptr(1, 8));
}

// Every way a record or a range handed to openPeerBuffer can be wrong, each a typed error naming it.
TEST(BufferRegistration, BadRecordsAreTypedErrorsNamingWhatWasWrong) {
  World world = makeWorld(kBufferRegistrationRanks);
  RankBuffers buffers(1024);  // rank 1 exports 4 KiB
  BufferSharing& owner = sharingOf(*world.sim->transport(1));
  BufferSharing& reader = sharingOf(*world.sim->transport(0));
  auto exported = owner.exportBuffer(buffers.ptr(1), 4096);
  ASSERT_TRUE(exported.isOk()) << exported.status().toString();
  const std::vector<std::byte> good = *exported;
  ASSERT_TRUE(reader.openPeerBuffer(1, good, 0, 4096).isOk());

  struct Case {
    std::string name;
    int peer;
    std::vector<std::byte> record;
    std::size_t offset, bytes;
    ErrorCode code;
    std::string says;
  };
  auto patched = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    std::vector<std::byte> r = good;
    std::memcpy(r.data() + at, &value, width);
    return r;
  };
  std::vector<std::byte> truncated(good.begin(), good.end() - 1);
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  // Layout (sim_buffer_registry.cc): magic u32, rank u32, world u64, export id u64, base u64, bytes u64.
  const std::vector<Case> cases = {
      {"truncated", 1, truncated, 0, 16, ErrorCode::kCorrupt, "record of 39 bytes"},
      {"too long", 1, longer, 0, 16, ErrorCode::kCorrupt, "record of 41 bytes"},
      {"empty", 1, {}, 0, 16, ErrorCode::kCorrupt, "record of 0 bytes"},
      {"magic", 1, patched(0, 0x12345678, 4), 0, 16, ErrorCode::kCorrupt, "magic"},
      {"wrong rank", 2, good, 0, 16, ErrorCode::kCorrupt, "record names rank 1"},
      {"wrong world", 1, patched(8, 987654321ull, 8), 0, 16, ErrorCode::kCorrupt,
       "belongs to simulated world 987654321"},
      {"forged export id", 1, patched(16, 999, 8), 0, 16, ErrorCode::kCorrupt, "does not export"},
      {"forged size", 1, patched(32, 8192, 8), 0, 16, ErrorCode::kCorrupt, "does not export"},
      {"forged base", 1, patched(24, 4096, 8), 0, 16, ErrorCode::kCorrupt, "does not export"},
      {"offset outside", 1, good, 4097, 1, ErrorCode::kInvalidArgument, "offset 4097 of 1 bytes is outside"},
      {"size outside", 1, good, 4000, 97, ErrorCode::kInvalidArgument, "offset 4000 of 97 bytes is outside"},
      {"size overflows", 1, good, 16, SIZE_MAX, ErrorCode::kInvalidArgument, "is outside the registered allocation"},
      {"empty range", 1, good, 0, 0, ErrorCode::kInvalidArgument, "of 0 bytes is outside"},
      {"peer outside the world", kBufferRegistrationRanks, good, 0, 16, ErrorCode::kInvalidArgument,
       "no such rank in a world of 3"},
      {"negative peer", -1, good, 0, 16, ErrorCode::kInvalidArgument, "no such rank"},
  };
  for (const Case& c : cases) {
    auto view = reader.openPeerBuffer(c.peer, c.record, c.offset, c.bytes);
    ASSERT_FALSE(view.isOk()) << c.name;
    EXPECT_EQ(view.status().code(), c.code) << c.name << ": " << view.status().toString();
    EXPECT_NE(view.status().message().find(c.says), std::string::npos) << c.name << ": " << view.status().toString();
  }
  // A record of another simulated world (with its own id) is refused too.
  auto other = sim::SimWorld::create(kBufferRegistrationRanks, {});
  ASSERT_TRUE(other.isOk());
  auto foreign = sharingOf(*(*other)->transport(1)).exportBuffer(buffers.ptr(1), 4096);
  ASSERT_TRUE(foreign.isOk());
  const auto view = reader.openPeerBuffer(1, *foreign, 0, 16);
  EXPECT_EQ(view.status().code(), ErrorCode::kCorrupt) << view.status().toString();
  EXPECT_NE(view.status().message().find("belongs to simulated world"), std::string::npos);
  // A released export no longer opens.
  owner.releaseBuffer(buffers.ptr(1), 4096);
  const auto released = reader.openPeerBuffer(1, good, 0, 16);
  EXPECT_EQ(released.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(released.status().message().find("released"), std::string::npos) << released.status().toString();
}

TEST(BufferRegistration, TrackedAllocationsAreCheckedLikeADriverWould) {
  World world = makeWorld(1);
  std::vector<std::byte> memory(8192);
  sim::SimBufferRegistry& registry = world.registry();
  ASSERT_TRUE(registry.trackAllocation(0, memory.data(), 4096).isOk());
  EXPECT_EQ(registry.trackAllocation(0, memory.data() + 100, 4096).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry.trackAllocation(0, nullptr, 16).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry.trackAllocation(1, memory.data() + 4096, 16).code(), ErrorCode::kInvalidArgument);
  auto inside = registry.allocationOf(0, memory.data() + 10, 20);
  ASSERT_TRUE(inside.isOk());
  EXPECT_EQ(inside->base, memory.data());
  EXPECT_EQ(inside->bytes, 4096u);
  // A buffer crossing the tracked allocation's end is refused by the registration cache.
  auto crossing = world.comms[0]->registerBuffer(memory.data() + 4000, 200);
  EXPECT_EQ(crossing.status().code(), ErrorCode::kInvalidArgument) << crossing.status().toString();
  EXPECT_NE(crossing.status().message().find("extends past the end of its allocation"), std::string::npos);
  EXPECT_TRUE(registry.untrackAllocation(0, memory.data()).isOk());
  EXPECT_EQ(registry.untrackAllocation(0, memory.data()).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::testing
