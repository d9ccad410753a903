// Stateful property test of SymmetricPool against the reference model (pool_model.h): random
// sequences of allocate / best-effort allocate / drop / copy (lease) / defragment / set quota /
// exhaust, on pools of random size, block limit, alignment and threshold. After every command:
// - no two live blocks overlap, each lies inside the pool and is aligned as asked;
// - every handle's offset, size, kind and use count, every statistic, and every move equal the model's;
// - a failed operation changed nothing (the whole block list compared before and after);
// - a second pool fed the same commands has the same blocks (determinism, as symmetry requires);
// - the pool's own structures are consistent (checkConsistency).
// ASan checks that nothing leaks when the pools and handles go, in either order.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <cstdint>
#include <limits>
#include <string>

#include "pool_model.h"

namespace peerreduce::testing {
namespace {

struct PoolSut {
  explicit PoolSut(const SymmetricPoolOptions& options)
      : pool(SymmetricPool::create(options).value()), twin(SymmetricPool::create(options).value()) {}
  // Declaration order: the main pool outlives its handles; the twin dies before its handles, so
  // handles outliving their pool are exercised too.
  SymmetricPool pool;
  std::vector<PoolBlock> handles;
  std::vector<PoolBlock> twin_handles;
  SymmetricPool twin;
};

using PoolCommand = rc::state::Command<PoolModel, PoolSut>;

const char* settingFor(PoolOutcome outcome) {
  switch (outcome) {
    case PoolOutcome::kQuota:
      return "PEERREDUCE_POOL_QUOTA_BYTES";
    case PoolOutcome::kCapacity:
      return "PEERREDUCE_POOL_BYTES";
    case PoolOutcome::kQuotaAndCapacity:
      return "PEERREDUCE_POOL_QUOTA_BYTES and PEERREDUCE_POOL_BYTES";
    case PoolOutcome::kLimit:
      return "max_blocks";
    default:
      return "";
  }
}

// Everything observable about a pool except the failure counter.
struct Snapshot {
  std::vector<BlockInfo> blocks;
  PoolStats stats;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};
Snapshot snapshot(const SymmetricPool& pool) {
  Snapshot s{pool.blocks(), pool.stats()};
  s.stats.failed_allocations = 0;
  return s;
}

void checkAgainstModel(const PoolModel& expected, const PoolSut& sut) {
  RC_ASSERT(sut.pool.checkConsistency().isOk());
  RC_ASSERT(sut.twin.checkConsistency().isOk());
  RC_ASSERT(sut.handles.size() == expected.handles.size());
  for (std::size_t i = 0; i < sut.handles.size(); ++i) {
    const ModelBlock& b = expected.blocks.at(expected.handles[i]);
    const PoolBlock& h = sut.handles[i];
    RC_ASSERT(h.valid());
    RC_ASSERT(h.offset() == b.offset);
    RC_ASSERT(h.size() == b.size);
    RC_ASSERT(h.alignment() == b.alignment);
    RC_ASSERT(h.kind() == b.kind);
    RC_ASSERT(h.useCount() == static_cast<std::uint32_t>(b.refs));
    RC_ASSERT(sut.twin_handles[i].offset() == h.offset());
  }
  // Directly from the pool, independent of the model: no overlap, inside, aligned, 16-byte sizes.
  std::size_t end = 0;
  for (const BlockInfo& info : sut.pool.blocks()) {
    RC_ASSERT(info.offset >= end);
    end = info.offset + info.size;
    RC_ASSERT(end <= sut.pool.capacity());
    RC_ASSERT(info.size % kMinPoolAlignmentBytes == 0);
    if (!info.free) RC_ASSERT(info.offset % info.alignment == 0);
  }
  const PoolStats want = modelStats(expected);
  RC_ASSERT(sut.pool.stats() == want);
  RC_ASSERT(sut.twin.stats() == want);
  RC_ASSERT(sut.pool.blocks() == sut.twin.blocks());
}

// Runs one allocation on both pools and checks it against the model's prediction.
void runAllocation(const PoolModel& s0, PoolSut& sut, std::size_t preferred, std::size_t minimum, std::size_t alignment,
                   BlockKind kind) {
  PoolModel expected = s0;
  const ModelAllocation want = modelAllocate(expected, preferred, minimum, alignment, kind);
  const Snapshot before = snapshot(sut.pool);
  auto got = minimum == preferred ? sut.pool.allocate(preferred, kind, alignment)
                                  : sut.pool.allocateBestEffort(preferred, minimum, kind, alignment);
  auto twin = minimum == preferred ? sut.twin.allocate(preferred, kind, alignment)
                                   : sut.twin.allocateBestEffort(preferred, minimum, kind, alignment);
  RC_ASSERT(got.isOk() == (want.outcome == PoolOutcome::kOk));
  RC_ASSERT(twin.isOk() == got.isOk());
  if (got.isOk()) {
    RC_ASSERT(got->offset() == want.offset);
    RC_ASSERT(got->size() == want.size);
    RC_ASSERT(got->size() >= modelRoundUp(minimum, 16));
    RC_ASSERT(preferred > s0.options.capacity_bytes || got->size() <= modelRoundUp(preferred, 16));
    sut.handles.push_back(std::move(*got));
    sut.twin_handles.push_back(std::move(*twin));
  } else {
    // A failed operation changes nothing but the failure counter.
    RC_ASSERT(snapshot(sut.pool) == before);
    const Status& status = got.status();
    if (want.outcome == PoolOutcome::kInvalid) {
      RC_ASSERT(status.code() == ErrorCode::kInvalidArgument);
    } else {
      RC_ASSERT(status.code() == ErrorCode::kOutOfMemory);
      RC_ASSERT(status.message().find(settingFor(want.outcome)) != std::string::npos);
      if (want.outcome != PoolOutcome::kLimit) {
        const PoolStats st = modelStats(expected);
        RC_ASSERT(status.message().find("largest free block " + std::to_string(st.largest_free_block_bytes)) !=
                  std::string::npos);
        RC_ASSERT(status.message().find(std::to_string(st.capacity_bytes - st.bytes_in_use) + " of ") !=
                  std::string::npos);
      }
    }
  }
  checkAgainstModel(expected, sut);
}

rc::Gen<std::size_t> genBytes(std::size_t capacity) {
  return rc::gen::weightedOneOf<std::size_t>({
      {8, rc::gen::inRange<std::size_t>(1, 513)},
      {6, rc::gen::inRange<std::size_t>(1, capacity / 4 + 2)},
      {1, rc::gen::inRange<std::size_t>(capacity / 2, capacity + 2)},
      {1, rc::gen::element<std::size_t>(0, capacity + 1, std::numeric_limits<std::size_t>::max())},
  });
}

rc::Gen<std::size_t> genAlignment() {
  // 0 = the pool's default; 8, 48 and 4 MiB are invalid.
  return rc::gen::element<std::size_t>(0, 0, 16, 16, 32, 64, 256, 1024, 4096, 8, 48, std::size_t{4} << 20);
}

rc::Gen<BlockKind> genKind() {
  return rc::gen::element(BlockKind::kScratch, BlockKind::kScratch, BlockKind::kFlags, BlockKind::kUserBuffer);
}

// Index of an existing handle; discards the command when there is none.
std::size_t pickHandle(const PoolModel& m) {
  RC_PRE(!m.handles.empty());
  return *rc::gen::inRange<std::size_t>(0, m.handles.size());
}

struct Allocate : PoolCommand {
  std::size_t bytes;
  std::size_t alignment = *genAlignment();
  BlockKind kind = *genKind();
  explicit Allocate(const PoolModel& m) : bytes(*genBytes(m.options.capacity_bytes)) {}
  void apply(PoolModel& m) const override { modelAllocate(m, bytes, bytes, alignment, kind); }
  void run(const PoolModel& s0, PoolSut& sut) const override { runAllocation(s0, sut, bytes, bytes, alignment, kind); }
  void show(std::ostream& os) const override {
    os << "allocate(" << bytes << ", " << blockKindName(kind) << ", align " << alignment << ")";
  }
};

struct AllocateBestEffort : PoolCommand {
  std::size_t preferred;
  std::size_t minimum;
  std::size_t alignment = *genAlignment();
  BlockKind kind = *genKind();
  explicit AllocateBestEffort(const PoolModel& m)
      : preferred(*genBytes(m.options.capacity_bytes)),
        // Mostly a fraction of `preferred`; sometimes 0 or above it (both invalid).
        minimum(*rc::gen::weightedOneOf<std::size_t>(
            {{8, rc::gen::inRange<std::size_t>(1, std::max<std::size_t>(2, preferred / 4 + 1))},
             {2, rc::gen::just(preferred / 2 + 1)},
             {1, rc::gen::element<std::size_t>(0, preferred + 1)}})) {}
  void apply(PoolModel& m) const override { modelAllocate(m, preferred, minimum, alignment, kind); }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    runAllocation(s0, sut, preferred, minimum, alignment, kind);
  }
  void show(std::ostream& os) const override {
    os << "allocateBestEffort(" << preferred << ", min " << minimum << ", " << blockKindName(kind) << ", align "
       << alignment << ")";
  }
};

struct DropHandle : PoolCommand {
  std::size_t index;
  explicit DropHandle(const PoolModel& m) : index(pickHandle(m)) {}
  void checkPreconditions(const PoolModel& m) const override { RC_PRE(index < m.handles.size()); }
  void apply(PoolModel& m) const override { modelDropHandle(m, index); }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    const auto at = static_cast<std::ptrdiff_t>(index);
    sut.handles.erase(sut.handles.begin() + at);
    sut.twin_handles.erase(sut.twin_handles.begin() + at);
    checkAgainstModel(nextState(s0), sut);
  }
  void show(std::ostream& os) const override { os << "drop(handle " << index << ")"; }
};

struct CopyHandle : PoolCommand {
  std::size_t index;
  explicit CopyHandle(const PoolModel& m) : index(pickHandle(m)) {}
  void checkPreconditions(const PoolModel& m) const override { RC_PRE(index < m.handles.size()); }
  void apply(PoolModel& m) const override { modelCopyHandle(m, index); }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    sut.handles.push_back(sut.handles[index]);
    sut.twin_handles.push_back(sut.twin_handles[index]);
    checkAgainstModel(nextState(s0), sut);
  }
  void show(std::ostream& os) const override { os << "copy(handle " << index << ")"; }
};

struct Defragment : PoolCommand {
  void apply(PoolModel& m) const override { modelCompact(m); }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    PoolModel expected = s0;
    const std::vector<BlockMove> want = modelCompact(expected);
    RC_ASSERT(sut.pool.defragment() == want);
    RC_ASSERT(sut.twin.defragment() == want);
    for (const BlockMove& move : want) RC_ASSERT(move.new_offset < move.old_offset);
    checkAgainstModel(expected, sut);
  }
  void show(std::ostream& os) const override { os << "defragment()"; }
};

struct SetQuota : PoolCommand {
  std::size_t quota;
  explicit SetQuota(const PoolModel& m)
      : quota(*rc::gen::weightedOneOf<std::size_t>(
            {{4, rc::gen::inRange<std::size_t>(1, m.options.capacity_bytes + 1)},
             {1, rc::gen::element<std::size_t>(0, m.options.capacity_bytes, m.options.capacity_bytes + 16)}})) {}
  void apply(PoolModel& m) const override {
    if (quota <= m.options.capacity_bytes) m.quota = quota == 0 ? m.options.capacity_bytes : quota;
  }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    const Snapshot before = snapshot(sut.pool);
    const Status s = sut.pool.setQuota(quota);
    RC_ASSERT(sut.twin.setQuota(quota) == s);
    if (quota > s0.options.capacity_bytes) {
      RC_ASSERT(s.code() == ErrorCode::kInvalidArgument);
      RC_ASSERT(s.message().find("PEERREDUCE_POOL_QUOTA_BYTES") != std::string::npos);
      RC_ASSERT(snapshot(sut.pool) == before);
    } else {
      RC_ASSERT(s.isOk());
    }
    checkAgainstModel(nextState(s0), sut);
  }
  void show(std::ostream& os) const override { os << "setQuota(" << quota << ")"; }
};

// Allocates `bytes` until the pool refuses (space, quota or block limit), then checks the refusal.
struct Exhaust : PoolCommand {
  std::size_t bytes;
  BlockKind kind = *genKind();
  explicit Exhaust(const PoolModel& m)
      : bytes(*rc::gen::inRange<std::size_t>(m.options.capacity_bytes / 64, m.options.capacity_bytes / 4 + 1)) {}
  // The block limit ends the loop even if every allocation succeeded.
  std::size_t bound(const PoolModel& m) const { return m.options.max_blocks + 1; }
  void apply(PoolModel& m) const override {
    const std::size_t limit = bound(m);
    for (std::size_t i = 0; i < limit; ++i) {
      if (modelAllocate(m, bytes, bytes, 0, kind).outcome != PoolOutcome::kOk) break;
    }
  }
  void run(const PoolModel& s0, PoolSut& sut) const override {
    PoolModel expected = s0;
    const std::size_t limit = bound(s0);
    for (std::size_t i = 0; i < limit; ++i) {
      const PoolModel before = expected;
      const bool ok = modelAllocate(expected, bytes, bytes, 0, kind).outcome == PoolOutcome::kOk;
      runAllocation(before, sut, bytes, bytes, 0, kind);
      if (!ok) break;
    }
    RC_ASSERT(sut.pool.stats().failed_allocations == expected.failed);
  }
  void show(std::ostream& os) const override { os << "exhaust(" << bytes << ", " << blockKindName(kind) << ")"; }
};

SymmetricPoolOptions genOptions(bool frequent_compaction) {
  SymmetricPoolOptions o;
  o.region_granularity_bytes = *rc::gen::element<std::size_t>(4096, 16384);
  o.capacity_bytes = o.region_granularity_bytes * *rc::gen::inRange<std::size_t>(1, 9);
  o.default_alignment_bytes = *rc::gen::element<std::size_t>(16, 256, 1024);
  o.quota_bytes = *rc::gen::weightedOneOf<std::size_t>(
      {{3, rc::gen::just<std::size_t>(0)}, {1, rc::gen::inRange<std::size_t>(1, o.capacity_bytes + 1)}});
  o.defrag_threshold = frequent_compaction ? *rc::gen::element(0.0, 0.1, 0.2) : *rc::gen::element(0.0, 0.3, 0.6, 1.0);
  o.max_blocks = *rc::gen::element<std::uint32_t>(1, 4, 16, 48);
  o.rank = *rc::gen::inRange(-1, 8);
  return o;
}

RC_GTEST_PROP(SymmetricPoolState, MatchesTheReferenceModel, ()) {
  const SymmetricPoolOptions options = genOptions(false);
  PoolSut sut(options);
  rc::state::check(
      makePoolModel(options), sut,
      rc::state::gen::execOneOfWithArgs<Allocate, Allocate, Allocate, AllocateBestEffort, DropHandle, DropHandle,
                                        DropHandle, CopyHandle, Defragment, SetQuota, Exhaust>());
}

// Low thresholds and more copies (pins) and defragment() calls: compaction on most releases.
RC_GTEST_PROP(SymmetricPoolState, MatchesTheReferenceModelUnderFrequentCompaction, ()) {
  const SymmetricPoolOptions options = genOptions(true);
  PoolSut sut(options);
  rc::state::check(makePoolModel(options), sut,
                   rc::state::gen::execOneOfWithArgs<Allocate, Allocate, AllocateBestEffort, DropHandle, DropHandle,
                                                     CopyHandle, Defragment, Defragment, Exhaust>());
}

}  // namespace
}  // namespace peerreduce::testing
