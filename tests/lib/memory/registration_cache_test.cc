// RegistrationCache: export once per allocation, base + offset for peers, reuse for sub-ranges,
// explicit release and release of everything with the cache, typed errors; and a property over random
// register / release / lookup sequences against a model.
#include "memory/registration_cache.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace peerreduce::testing {
namespace {

// Allocations are ranges of one backing buffer that the test declares; the resolver answers from them.
class FakeResolver : public AllocationResolver {
 public:
  void add(const void* base, std::size_t bytes) { ranges_[reinterpret_cast<std::uintptr_t>(base)] = bytes; }
  void remove(const void* base) { ranges_.erase(reinterpret_cast<std::uintptr_t>(base)); }
  StatusOr<AddressRange> allocationOf(const void* ptr) const override {
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    auto it = ranges_.upper_bound(p);
    if (it == ranges_.begin()) return invalidArgumentError("fake resolver: not an allocation");
    --it;
    if (p - it->first >= it->second) return invalidArgumentError("fake resolver: not an allocation");
    return AddressRange{it->first, it->second};
  }

 private:
  std::map<std::uintptr_t, std::size_t> ranges_;
};

// Records exports and releases; the record is the allocation base, as 8 bytes.
class FakeExporter : public HandleExporter {
 public:
  StatusOr<std::vector<std::byte>> exportAllocation(const AddressRange& allocation) override {
    if (fail_next) {
      fail_next = false;
      return unavailableError("fake exporter: injected failure");
    }
    ++exports;
    live[allocation.base] = allocation.bytes;
    std::vector<std::byte> record(record_bytes);
    std::memcpy(record.data(), &allocation.base, std::min(record_bytes, sizeof(allocation.base)));
    return record;
  }
  void releaseExport(const AddressRange& allocation, const std::vector<std::byte>& /*record*/) override {
    ++released;
    live.erase(allocation.base);
  }
  bool fail_next = false;
  std::size_t record_bytes = 8;
  int exports = 0;
  int released = 0;
  std::map<std::uintptr_t, std::size_t> live;
};

struct Fixture {
  std::vector<std::byte> memory = std::vector<std::byte>(1 << 16);
  std::shared_ptr<FakeResolver> resolver = std::make_shared<FakeResolver>();
  std::shared_ptr<FakeExporter> exporter = std::make_shared<FakeExporter>();
  std::byte* at(std::size_t offset) { return memory.data() + offset; }
};

TEST(RegistrationCache, ExportsAnAllocationOnceAndReturnsBasePlusOffset) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  auto reg = cache->registerBuffer(f.at(100), 200);
  ASSERT_TRUE(reg.isOk()) << reg.status().toString();
  EXPECT_EQ(reg->allocation.base, reinterpret_cast<std::uintptr_t>(f.at(0)));
  EXPECT_EQ(reg->allocation.bytes, 4096u);
  EXPECT_EQ(reg->offset, 100u);
  EXPECT_EQ(reg->bytes, 200u);
  EXPECT_EQ(reg->handle_record.size(), 8u);
  // A sub-range (and the same range again) reuses the entry: no second export.
  auto again = cache->registerBuffer(f.at(1000), 3096);
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->offset, 1000u);
  EXPECT_EQ(again->handle_record, reg->handle_record);
  EXPECT_EQ(f.exporter->exports, 1);
  const RegistrationStats s = cache->stats();
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.registered_bytes, 4096u);
  EXPECT_EQ(s.registrations, 2u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.exports, 1u);
}

TEST(RegistrationCache, LookupFindsTheContainingAllocationWithoutChangingAnything) {
  Fixture f;
  f.resolver->add(f.at(4096), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  ASSERT_TRUE(cache->registerBuffer(f.at(4096), 16).isOk());
  auto hit = cache->lookup(f.at(5000), 100);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->offset, 5000u - 4096u);
  EXPECT_EQ(hit->refcount, 1u);
  EXPECT_FALSE(cache->lookup(f.at(8000), 200).has_value());  // runs past the allocation's end
  EXPECT_FALSE(cache->lookup(f.at(100), 1).has_value());     // below it
  EXPECT_FALSE(cache->lookup(nullptr, 1).has_value());
  EXPECT_EQ(cache->stats().registrations, 1u);
}

TEST(RegistrationCache, ReleaseDropsOneReferenceAndTheExportWithTheLast) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  ASSERT_TRUE(cache->registerBuffer(f.at(0), 64).isOk());
  ASSERT_TRUE(cache->registerBuffer(f.at(64), 64).isOk());
  ASSERT_TRUE(cache->release(f.at(64)).isOk());
  EXPECT_EQ(f.exporter->released, 0);
  EXPECT_EQ(cache->lookup(f.at(0), 1)->refcount, 1u);
  ASSERT_TRUE(cache->release(f.at(0)).isOk());
  EXPECT_EQ(f.exporter->released, 1);
  EXPECT_EQ(cache->stats().entries, 0u);
  const Status again = cache->release(f.at(0));
  EXPECT_EQ(again.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(again.message().find("not inside any registered allocation"), std::string::npos);
}

TEST(RegistrationCache, DestructionReleasesEverything) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  f.resolver->add(f.at(8192), 4096);
  {
    auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
    ASSERT_TRUE(cache->registerBuffer(f.at(0), 64).isOk());
    ASSERT_TRUE(cache->registerBuffer(f.at(8192), 64).isOk());
    ASSERT_TRUE(cache->registerBuffer(f.at(8192), 64).isOk());
  }
  EXPECT_EQ(f.exporter->released, 2);
  EXPECT_TRUE(f.exporter->live.empty());
}

TEST(RegistrationCache, RejectsBadBuffersAndChangesNothing) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  const auto expectInvalid = [&](const void* p, std::size_t n, const char* words) {
    auto r = cache->registerBuffer(p, n);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().toString();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().toString();
  };
  expectInvalid(nullptr, 16, "null");
  expectInvalid(f.at(0), 0, "empty");
  expectInvalid(f.at(4000), 200, "extends past the end of its allocation");
  expectInvalid(f.at(20000), 16, "fake resolver");  // the resolver's own error, with context
  EXPECT_EQ(cache->stats().failures, 4u);
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(f.exporter->exports, 0);
}

TEST(RegistrationCache, RefusesAStaleOverlappingRegistration) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  ASSERT_TRUE(cache->registerBuffer(f.at(0), 64).isOk());
  // The allocation is "freed and reallocated" larger at the same base, without release.
  f.resolver->remove(f.at(0));
  f.resolver->add(f.at(0), 8192);
  auto r = cache->registerBuffer(f.at(5000), 64);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("release that registration first"), std::string::npos);
}

TEST(RegistrationCache, FullCacheIsOutOfMemoryNamingTheLimit) {
  Fixture f;
  for (std::size_t i = 0; i < 3; ++i) f.resolver->add(f.at(i * 4096), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter, /*max_entries=*/2).value();
  ASSERT_TRUE(cache->registerBuffer(f.at(0), 64).isOk());
  ASSERT_TRUE(cache->registerBuffer(f.at(4096), 64).isOk());
  auto r = cache->registerBuffer(f.at(8192), 64);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("max_entries"), std::string::npos);
  EXPECT_EQ(f.exporter->exports, 2);
}

TEST(RegistrationCache, ExporterFailuresAndOversizedRecordsChangeNothing) {
  Fixture f;
  f.resolver->add(f.at(0), 4096);
  auto cache = RegistrationCache::create(f.resolver, f.exporter).value();
  f.exporter->fail_next = true;
  auto r = cache->registerBuffer(f.at(0), 64);
  EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable);
  f.exporter->record_bytes = 4096;  // over kMaxPeerRecordBytes: the export is released again
  r = cache->registerBuffer(f.at(0), 64);
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
  EXPECT_TRUE(f.exporter->live.empty());
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(cache->stats().failures, 2u);
}

// A resolver that answers with a range not containing the pointer: a bug in the resolver, reported as such.
class BrokenResolver : public AllocationResolver {
 public:
  StatusOr<AddressRange> allocationOf(const void* ptr) const override {
    return AddressRange{reinterpret_cast<std::uintptr_t>(ptr) + 4096, 64};
  }
};

TEST(RegistrationCache, AResolverBugIsAnInternalError) {
  Fixture f;
  auto cache = RegistrationCache::create(std::make_shared<BrokenResolver>(), f.exporter, 4, /*rank=*/2).value();
  auto r = cache->registerBuffer(f.at(0), 16);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
  EXPECT_NE(r.status().message().find("rank 2: allocation resolver returned"), std::string::npos)
      << r.status().toString();
  const std::string line = describe(cache->stats());
  EXPECT_NE(line.find("failures=1"), std::string::npos) << line;
  EXPECT_NE(line.find("entries=0"), std::string::npos) << line;
}

TEST(RegistrationCache, CreateRejectsMissingInterfaces) {
  Fixture f;
  EXPECT_EQ(RegistrationCache::create(nullptr, f.exporter).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(RegistrationCache::create(f.resolver, nullptr).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(RegistrationCache::create(f.resolver, f.exporter, 0).status().code(), ErrorCode::kInvalidArgument);
}

// Random register / release / lookup over 8 allocations of random sizes: every result, refcount and
// the exporter's live set equal a model (allocation index -> references).
RC_GTEST_PROP(RegistrationCache, MatchesAReferenceCountModel, ()) {
  constexpr std::size_t kAllocations = 8;
  constexpr std::size_t kSlotBytes = 1024;  // each allocation lives in its own 1 KiB slot
  Fixture f;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < kAllocations; ++i) {
    sizes.push_back(*rc::gen::inRange<std::size_t>(1, kSlotBytes + 1));
    f.resolver->add(f.at(i * kSlotBytes), sizes.back());
  }
  auto cache = RegistrationCache::create(f.resolver, f.exporter, /*max_entries=*/6).value();
  std::vector<int> refs(kAllocations, 0);
  const int steps = *rc::gen::inRange(1, 80);
  for (int step = 0; step < steps; ++step) {
    const std::size_t a = *rc::gen::inRange<std::size_t>(0, kAllocations);
    const std::size_t offset = *rc::gen::inRange<std::size_t>(0, sizes[a]);
    const std::size_t bytes = *rc::gen::inRange<std::size_t>(1, sizes[a] - offset + 2);  // may overrun by 1
    std::byte* p = f.at(a * kSlotBytes + offset);
    const int entries = static_cast<int>(std::count_if(refs.begin(), refs.end(), [](int r) { return r > 0; }));
    switch (*rc::gen::inRange(0, 3)) {
      case 0: {
        auto r = cache->registerBuffer(p, bytes);
        const bool fits = offset + bytes <= sizes[a];
        const bool room = refs[a] > 0 || entries < 6;
        RC_ASSERT(r.isOk() == (fits && room));
        if (r.isOk()) {
          ++refs[a];
          RC_ASSERT(r->offset == offset);
          RC_ASSERT(r->allocation.bytes == sizes[a]);
        } else {
          RC_ASSERT(r.status().code() == (fits ? ErrorCode::kOutOfMemory : ErrorCode::kInvalidArgument));
        }
        break;
      }
      case 1: {
        const Status s = cache->release(p);
        RC_ASSERT(s.isOk() == (refs[a] > 0));
        if (refs[a] > 0) --refs[a];
        break;
      }
      default: {
        auto hit = cache->lookup(p, bytes);
        RC_ASSERT(hit.has_value() == (refs[a] > 0 && offset + bytes <= sizes[a]));
        if (hit) RC_ASSERT(hit->refcount == static_cast<std::uint32_t>(refs[a]));
      }
    }
    std::size_t live = 0;
    for (std::size_t i = 0; i < kAllocations; ++i) {
      const bool exported = f.exporter->live.count(reinterpret_cast<std::uintptr_t>(f.at(i * kSlotBytes))) != 0;
      RC_ASSERT(exported == (refs[i] > 0));
      live += refs[i] > 0 ? 1 : 0;
    }
    RC_ASSERT(cache->stats().entries == live);
  }
  cache.reset();
  RC_ASSERT(f.exporter->live.empty());
}

}  // namespace
}  // namespace peerreduce::testing
