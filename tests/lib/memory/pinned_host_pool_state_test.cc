// Stateful property test of PinnedHostPool against a model: random acquire / release / trim /
// injected system failures / exhaustion, with random limits and lock failures. After every command:
// the limit holds, the blocks each handle got (id, class, lock state) and the order in which idle
// blocks were evicted (least recently released first) equal the model's, reuse is counted, every
// statistic matches, a failed acquire changed nothing but the failure counter, and the allocator
// holds exactly the blocks the model says are pinned.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "fake_host_allocator.h"
#include "memory/pinned_host_pool.h"

namespace peerreduce::testing {
namespace {

enum class PinnedOutcome { kOk, kInvalid, kLimit, kSystem };

struct PinnedModel {
  PinnedHostPoolOptions options;
  int lock_fail_period = 0;
  struct Block {
    std::size_t cls = 0;
    bool idle = false;
    std::uint64_t seq = 0;
    bool locked = true;
  };
  std::map<std::uint64_t, Block> blocks;  // by id
  std::vector<std::uint64_t> handles;     // ids handed out, in the order of the SUT's handles
  std::vector<std::size_t> handle_bytes;
  std::uint64_t next_id = 0;
  std::uint64_t next_seq = 0;
  std::uint64_t lock_calls = 0;
  bool fail_next = false;
  std::vector<std::uint64_t> freed;  // ids returned to the system, in order
  PinnedStats counters;              // acquisitions, reuses, ... (the derived fields are recomputed)
};

std::size_t modelClass(std::size_t bytes, std::size_t min_block) {
  if (bytes <= min_block) return min_block;
  if (bytes > (std::numeric_limits<std::size_t>::max() >> 1) + 1) return 0;
  std::size_t cls = min_block;
  while (cls < bytes) cls *= 2;
  return cls;
}

PinnedStats modelStats(const PinnedModel& m) {
  PinnedStats s = m.counters;
  s.limit_bytes = m.options.limit_bytes;
  s.bytes_pinned = s.bytes_in_use = s.bytes_idle = s.blocks_in_use = s.blocks_idle = s.blocks_unlocked = 0;
  for (const auto& [id, b] : m.blocks) {
    s.bytes_pinned += b.cls;
    (b.idle ? s.bytes_idle : s.bytes_in_use) += b.cls;
    ++(b.idle ? s.blocks_idle : s.blocks_in_use);
    if (!b.locked) ++s.blocks_unlocked;
  }
  return s;
}

void modelFree(PinnedModel& m, std::uint64_t id) {
  m.freed.push_back(id);
  m.blocks.erase(id);
}

PinnedOutcome modelAcquire(PinnedModel& m, std::size_t bytes) {
  if (bytes == 0) return PinnedOutcome::kInvalid;
  const std::size_t cls = modelClass(bytes, m.options.min_block_bytes);
  if (cls == 0 || cls > m.options.limit_bytes) {
    ++m.counters.failures;
    return PinnedOutcome::kLimit;
  }
  // Reuse the most recently released idle block of the class.
  std::uint64_t reuse = 0;
  std::uint64_t best_seq = 0;
  for (const auto& [id, b] : m.blocks) {
    if (b.idle && b.cls == cls && b.seq >= best_seq) {
      best_seq = b.seq;
      reuse = id;
    }
  }
  if (reuse != 0) {
    m.blocks[reuse].idle = false;
    m.handles.push_back(reuse);
    m.handle_bytes.push_back(bytes);
    ++m.counters.reuses;
    ++m.counters.acquisitions;
    m.counters.bytes_staged += bytes;  // every acquisition here is for staging: its bytes are traffic
    return PinnedOutcome::kOk;
  }
  const PinnedStats now = modelStats(m);
  if (now.bytes_in_use + cls > m.options.limit_bytes) {
    ++m.counters.failures;
    return PinnedOutcome::kLimit;
  }
  if (m.fail_next) {
    m.fail_next = false;
    ++m.counters.failures;
    return PinnedOutcome::kSystem;
  }
  // Evict the least recently released idle blocks until the new one fits.
  const std::size_t bound = m.blocks.size();  // each pass evicts one block
  for (std::size_t guard = 0; guard < bound && modelStats(m).bytes_pinned + cls > m.options.limit_bytes; ++guard) {
    std::uint64_t oldest = 0;
    std::uint64_t oldest_seq = std::numeric_limits<std::uint64_t>::max();
    for (const auto& [id, b] : m.blocks) {
      if (b.idle && b.seq < oldest_seq) {
        oldest_seq = b.seq;
        oldest = id;
      }
    }
    ++m.counters.evictions;
    m.counters.bytes_evicted += m.blocks[oldest].cls;
    modelFree(m, oldest);
  }
  ++m.lock_calls;
  PinnedModel::Block b;
  b.cls = cls;
  b.locked = !(m.lock_fail_period > 0 && m.lock_calls % static_cast<std::uint64_t>(m.lock_fail_period) == 0);
  if (!b.locked) ++m.counters.lock_failures;
  const std::uint64_t id = ++m.next_id;
  m.blocks[id] = b;
  m.handles.push_back(id);
  m.handle_bytes.push_back(bytes);
  ++m.counters.system_allocations;
  ++m.counters.acquisitions;
  m.counters.bytes_staged += bytes;
  m.counters.peak_bytes_pinned = std::max(m.counters.peak_bytes_pinned, modelStats(m).bytes_pinned);
  return PinnedOutcome::kOk;
}

struct PinnedSut {
  std::shared_ptr<FakeHostAllocator> allocator;
  PinnedHostPool pool;
  std::vector<PinnedBlock> handles;
};

using PinnedCommand = rc::state::Command<PinnedModel, PinnedSut>;

void checkAgainstModel(const PinnedModel& expected, const PinnedSut& sut) {
  const PinnedStats want = modelStats(expected);
  RC_ASSERT(sut.pool.stats() == want);
  RC_ASSERT(want.bytes_pinned <= expected.options.limit_bytes);
  RC_ASSERT(sut.allocator->liveCount() == expected.blocks.size());
  RC_ASSERT(sut.allocator->liveBytes() == want.bytes_pinned);
  RC_ASSERT(sut.allocator->freed() == expected.freed);
  RC_ASSERT(sut.allocator->misuse() == 0);
  RC_ASSERT(sut.handles.size() == expected.handles.size());
  for (std::size_t i = 0; i < sut.handles.size(); ++i) {
    const PinnedBlock& h = sut.handles[i];
    const auto& b = expected.blocks.at(expected.handles[i]);
    RC_ASSERT(h.id() == expected.handles[i]);
    RC_ASSERT(h.capacity() == b.cls);
    RC_ASSERT(h.size() == expected.handle_bytes[i]);
    RC_ASSERT(h.locked() == b.locked);
    RC_ASSERT(reinterpret_cast<std::uintptr_t>(h.data()) % expected.options.alignment_bytes == 0);
  }
}

rc::Gen<std::size_t> genPinnedBytes(std::size_t limit) {
  return rc::gen::weightedOneOf<std::size_t>({
      {8, rc::gen::inRange<std::size_t>(1, limit / 2 + 1)},
      {3, rc::gen::inRange<std::size_t>(1, 2049)},
      {1, rc::gen::inRange<std::size_t>(limit / 2, limit + 2)},
      {1, rc::gen::element<std::size_t>(0, limit * 4, std::numeric_limits<std::size_t>::max())},
  });
}

void runAcquire(const PinnedModel& s0, PinnedSut& sut, std::size_t bytes) {
  PinnedModel expected = s0;
  const PinnedOutcome want = modelAcquire(expected, bytes);
  PinnedStats before = sut.pool.stats();
  auto got = sut.pool.acquire(bytes);
  RC_ASSERT(got.isOk() == (want == PinnedOutcome::kOk));
  if (got.isOk()) {
    std::memset(got->data(), 0xab, got->capacity());  // the whole class is usable (ASan checks)
    sut.handles.push_back(std::move(*got));
  } else {
    PinnedStats after = sut.pool.stats();
    if (want != PinnedOutcome::kInvalid) ++before.failures;
    RC_ASSERT(after == before);
    const Status& s = got.status();
    switch (want) {
      case PinnedOutcome::kInvalid:
        RC_ASSERT(s.code() == ErrorCode::kInvalidArgument);
        break;
      case PinnedOutcome::kLimit:
        RC_ASSERT(s.code() == ErrorCode::kOutOfMemory);
        RC_ASSERT(s.message().find("PEERREDUCE_PINNED_LIMIT_BYTES") != std::string::npos);
        break;
      case PinnedOutcome::kSystem:
        RC_ASSERT(s.code() == ErrorCode::kOutOfMemory);
        RC_ASSERT(s.message().find("injected") != std::string::npos);
        break;
      case PinnedOutcome::kOk:
        break;
    }
  }
  checkAgainstModel(expected, sut);
}

struct Acquire : PinnedCommand {
  std::size_t bytes;
  explicit Acquire(const PinnedModel& m) : bytes(*genPinnedBytes(m.options.limit_bytes)) {}
  void apply(PinnedModel& m) const override { modelAcquire(m, bytes); }
  void run(const PinnedModel& s0, PinnedSut& sut) const override { runAcquire(s0, sut, bytes); }
  void show(std::ostream& os) const override { os << "acquire(" << bytes << ")"; }
};

std::size_t pickPinnedHandle(const PinnedModel& m) {
  RC_PRE(!m.handles.empty());
  return *rc::gen::inRange<std::size_t>(0, m.handles.size());
}

struct Release : PinnedCommand {
  std::size_t index;
  explicit Release(const PinnedModel& m) : index(pickPinnedHandle(m)) {}
  void checkPreconditions(const PinnedModel& m) const override { RC_PRE(index < m.handles.size()); }
  void apply(PinnedModel& m) const override {
    const std::uint64_t id = m.handles[index];
    m.handles.erase(m.handles.begin() + static_cast<std::ptrdiff_t>(index));
    m.handle_bytes.erase(m.handle_bytes.begin() + static_cast<std::ptrdiff_t>(index));
    m.blocks[id].idle = true;
    m.blocks[id].seq = ++m.next_seq;
  }
  void run(const PinnedModel& s0, PinnedSut& sut) const override {
    sut.handles.erase(sut.handles.begin() + static_cast<std::ptrdiff_t>(index));
    checkAgainstModel(nextState(s0), sut);
  }
  void show(std::ostream& os) const override { os << "release(handle " << index << ")"; }
};

struct Trim : PinnedCommand {
  void apply(PinnedModel& m) const override {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> idle;  // (seq, id): oldest first
    for (const auto& [id, b] : m.blocks) {
      if (b.idle) idle.emplace_back(b.seq, id);
    }
    std::sort(idle.begin(), idle.end());
    for (const auto& [seq, id] : idle) {
      ++m.counters.evictions;
      m.counters.bytes_evicted += m.blocks[id].cls;
      modelFree(m, id);
    }
  }
  void run(const PinnedModel& s0, PinnedSut& sut) const override {
    const PinnedModel expected = nextState(s0);
    RC_ASSERT(sut.pool.trim() == modelStats(s0).bytes_idle);
    checkAgainstModel(expected, sut);
  }
  void show(std::ostream& os) const override { os << "trim()"; }
};

struct FailNextSystemAllocation : PinnedCommand {
  void apply(PinnedModel& m) const override { m.fail_next = true; }
  void run(const PinnedModel& s0, PinnedSut& sut) const override {
    sut.allocator->failNextAllocation();
    checkAgainstModel(nextState(s0), sut);
  }
  void show(std::ostream& os) const override { os << "failNextSystemAllocation()"; }
};

// Acquires `bytes` until refused; the limit guarantees the refusal within limit / min_block tries.
struct ExhaustPinned : PinnedCommand {
  std::size_t bytes;
  explicit ExhaustPinned(const PinnedModel& m)
      : bytes(*rc::gen::inRange<std::size_t>(1, m.options.limit_bytes / 2 + 1)) {}
  void apply(PinnedModel& m) const override {
    const std::size_t bound = m.options.limit_bytes / m.options.min_block_bytes + 1;
    for (std::size_t i = 0; i < bound; ++i) {
      if (modelAcquire(m, bytes) != PinnedOutcome::kOk) break;
    }
  }
  void run(const PinnedModel& s0, PinnedSut& sut) const override {
    PinnedModel expected = s0;
    const std::size_t bound = s0.options.limit_bytes / s0.options.min_block_bytes + 1;
    for (std::size_t i = 0; i < bound; ++i) {
      const PinnedModel before = expected;
      const bool ok = modelAcquire(expected, bytes) == PinnedOutcome::kOk;
      runAcquire(before, sut, bytes);
      if (!ok) break;
    }
  }
  void show(std::ostream& os) const override { os << "exhaust(" << bytes << ")"; }
};

RC_GTEST_PROP(PinnedHostPoolState, MatchesTheReferenceModel, ()) {
  PinnedModel initial;
  initial.options.min_block_bytes = *rc::gen::element<std::size_t>(256, 1024, 4096);
  initial.options.alignment_bytes = *rc::gen::element<std::size_t>(64, 256);
  initial.options.limit_bytes = kMinPinnedLimitBytes * *rc::gen::inRange<std::size_t>(1, 9);
  initial.lock_fail_period = *rc::gen::element(0, 0, 2, 3);
  auto allocator = std::make_shared<FakeHostAllocator>(initial.lock_fail_period);
  PinnedSut sut{allocator, PinnedHostPool::create(initial.options, allocator).value(), {}};
  rc::state::check(initial, sut,
                   rc::state::gen::execOneOfWithArgs<Acquire, Acquire, Acquire, Release, Release, Trim,
                                                     FailNextSystemAllocation, ExhaustPinned>());
  // Destroying the pool with blocks still handed out: they are freed when their handles go.
  sut.pool = PinnedHostPool::create(initial.options, allocator).value();
  RC_ASSERT(allocator->liveCount() == sut.handles.size());
  sut.handles.clear();
  RC_ASSERT(allocator->liveCount() == 0u);
  RC_ASSERT(allocator->misuse() == 0);
}

}  // namespace
}  // namespace peerreduce::testing
