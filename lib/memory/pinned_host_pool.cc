#include "memory/pinned_host_pool.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "memory/pool_messages.h"

namespace peerreduce {
namespace {

Status validateOptions(const PinnedHostPoolOptions& o) {
  if (o.limit_bytes < kMinPinnedLimitBytes || o.limit_bytes > kMaxPinnedLimitBytes) {
    return invalidArgumentError("pinned host memory limit of " + std::to_string(o.limit_bytes) + " bytes is outside " +
                                std::to_string(kMinPinnedLimitBytes) + ".." + std::to_string(kMaxPinnedLimitBytes) +
                                " (PEERREDUCE_PINNED_LIMIT_BYTES)");
  }
  if (!isPowerOfTwo(o.min_block_bytes) || o.min_block_bytes > o.limit_bytes) {
    return invalidArgumentError("pinned min_block_bytes " + std::to_string(o.min_block_bytes) +
                                " is not a power of two up to the limit of " + std::to_string(o.limit_bytes));
  }
  if (!isPowerOfTwo(o.alignment_bytes) || o.alignment_bytes > o.min_block_bytes) {
    return invalidArgumentError("pinned alignment " + std::to_string(o.alignment_bytes) +
                                " is not a power of two up to min_block_bytes " + std::to_string(o.min_block_bytes));
  }
  return Status::ok();
}

}  // namespace

namespace detail {

// Blocks by id (the order of system allocations); idle blocks are also indexed by release sequence
// (LRU order for eviction) and by (class, sequence) (most recent of a class for reuse).
class PinnedState {
 public:
  struct Grant {
    void* data;
    std::size_t capacity;
    bool locked;
    std::uint64_t id;
  };

  PinnedState(const PinnedHostPoolOptions& options, std::shared_ptr<HostAllocator> allocator)
      : options_(options), allocator_(std::move(allocator)) {}

  ~PinnedState() {
    // Only reached when no handle is left: every block here is idle.
    for (auto& [id, block] : blocks_) freeBlock(block);
  }

  const PinnedHostPoolOptions& options() const { return options_; }

  StatusOr<Grant> acquire(std::size_t bytes, PinnedUse use) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes == 0) return invalidArgumentError(rankPrefix(options_.rank) + "pinned host allocation of 0 bytes");
    const std::size_t cls = PinnedHostPool::sizeClassOf(bytes, options_.min_block_bytes);
    if (cls == 0 || cls > options_.limit_bytes) {
      ++failures_;
      return outOfMemoryError(rankPrefix(options_.rank) + "pinned host allocation of " + std::to_string(bytes) +
                              " bytes (size class " + (cls == 0 ? std::string("beyond 2^63") : std::to_string(cls)) +
                              ") exceeds the pinned limit of " + std::to_string(options_.limit_bytes) +
                              " bytes; raise PEERREDUCE_PINNED_LIMIT_BYTES");
    }
    // Reuse: the most recently released idle block of this class.
    auto it = idle_by_class_.upper_bound({cls, std::numeric_limits<std::uint64_t>::max()});
    if (it != idle_by_class_.begin() && std::prev(it)->first.first == cls) {
      --it;
      const std::uint64_t id = it->second;
      Block& block = blocks_.at(id);
      removeIdle(block);
      bytes_in_use_ += block.capacity;
      ++blocks_in_use_;
      ++reuses_;
      ++acquisitions_;
      if (use == PinnedUse::kStaging) bytes_staged_.fetch_add(bytes, std::memory_order_relaxed);
      return Grant{block.data, block.capacity, block.locked, id};
    }
    if (bytes_pinned_ - bytes_idle_ + cls > options_.limit_bytes) {
      ++failures_;
      return outOfMemoryError(rankPrefix(options_.rank) + "cannot pin " + std::to_string(bytes) +
                              " bytes (size class " + std::to_string(cls) + "): " + std::to_string(bytes_in_use_) +
                              " bytes are in use and " + std::to_string(bytes_idle_) +
                              " idle (evictable) of the pinned limit of " + std::to_string(options_.limit_bytes) +
                              "; release pinned blocks or raise PEERREDUCE_PINNED_LIMIT_BYTES");
    }
    // Take the memory first: if the system refuses, nothing has been evicted.
    auto memory = allocator_->allocate(cls, options_.alignment_bytes);
    if (!memory.isOk()) {
      ++failures_;
      return memory.status().withContext(rankPrefix(options_.rank) + "pinned host allocation of " +
                                         std::to_string(cls) + " bytes from " + allocator_->name());
    }
    // Evict least recently released idle blocks; at most all of them, which was checked to suffice.
    while (bytes_pinned_ + cls > options_.limit_bytes && !idle_lru_.empty()) {
      const std::uint64_t victim = idle_lru_.begin()->second;
      Block& block = blocks_.at(victim);
      removeIdle(block);
      ++evictions_;
      bytes_evicted_ += block.capacity;
      forget(victim);
    }
    Block block{*memory, cls, false, 0};
    block.locked = allocator_->lock(block.data, cls).isOk();
    if (!block.locked) {
      ++lock_failures_;
      ++blocks_unlocked_;
    }
    const std::uint64_t id = ++next_id_;
    blocks_.emplace(id, block);
    bytes_pinned_ += cls;
    peak_bytes_pinned_ = std::max(peak_bytes_pinned_, bytes_pinned_);
    bytes_in_use_ += cls;
    ++blocks_in_use_;
    ++system_allocations_;
    ++acquisitions_;
    if (use == PinnedUse::kStaging) bytes_staged_.fetch_add(bytes, std::memory_order_relaxed);
    return Grant{block.data, cls, block.locked, id};
  }

  void release(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    Block& block = blocks_.at(id);
    bytes_in_use_ -= block.capacity;
    --blocks_in_use_;
    if (closed_) {
      forget(id);
      return;
    }
    if (!allocator_->reusable(block.data)) {
      ++blocks_retired_;
      forget(id);
      return;
    }
    block.idle_seq = ++next_seq_;
    idle_lru_.emplace(block.idle_seq, id);
    idle_by_class_.emplace(std::make_pair(block.capacity, block.idle_seq), id);
    bytes_idle_ += block.capacity;
  }

  std::size_t trim(bool count_as_evictions) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t freed = 0;
    while (!idle_lru_.empty()) {  // bounded by the idle blocks, each removed once
      const std::uint64_t victim = idle_lru_.begin()->second;
      Block& block = blocks_.at(victim);
      removeIdle(block);
      freed += block.capacity;
      if (count_as_evictions) {
        ++evictions_;
        bytes_evicted_ += block.capacity;
      }
      forget(victim);
    }
    return freed;
  }

  void close() {
    trim(false);
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }

  PinnedStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    PinnedStats s;
    s.limit_bytes = options_.limit_bytes;
    s.bytes_pinned = bytes_pinned_;
    s.peak_bytes_pinned = peak_bytes_pinned_;
    s.bytes_in_use = bytes_in_use_;
    s.bytes_idle = bytes_idle_;
    s.blocks_in_use = blocks_in_use_;
    s.blocks_idle = idle_lru_.size();
    s.acquisitions = acquisitions_;
    s.reuses = reuses_;
    s.system_allocations = system_allocations_;
    s.evictions = evictions_;
    s.bytes_evicted = bytes_evicted_;
    s.failures = failures_;
    s.lock_failures = lock_failures_;
    s.blocks_unlocked = blocks_unlocked_;
    s.blocks_retired = blocks_retired_;
    s.bytes_staged = bytes_staged_.load(std::memory_order_relaxed);
    s.staged_operations = staged_operations_.load(std::memory_order_relaxed);
    return s;
  }

  HostAllocator& allocator() const { return *allocator_; }

  void recordStaged(std::uint64_t bytes) {
    bytes_staged_.fetch_add(bytes, std::memory_order_relaxed);
    staged_operations_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  struct Block {
    void* data;
    std::size_t capacity;
    bool locked;
    std::uint64_t idle_seq;  // release sequence while idle
  };

  void removeIdle(const Block& block) {
    idle_lru_.erase(block.idle_seq);
    idle_by_class_.erase({block.capacity, block.idle_seq});
    bytes_idle_ -= block.capacity;
  }

  // Returns block `id` (neither idle-indexed nor handed out any more) to the system.
  void forget(std::uint64_t id) {
    auto it = blocks_.find(id);
    bytes_pinned_ -= it->second.capacity;
    if (!it->second.locked) --blocks_unlocked_;
    freeBlock(it->second);
    blocks_.erase(it);
  }

  void freeBlock(const Block& block) {
    if (block.locked) allocator_->unlock(block.data, block.capacity);
    allocator_->deallocate(block.data, block.capacity);
  }

  const PinnedHostPoolOptions options_;
  const std::shared_ptr<HostAllocator> allocator_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Block> blocks_;                                         // by id
  std::map<std::uint64_t, std::uint64_t> idle_lru_;                               // release sequence -> id
  std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t> idle_by_class_;  // (class, sequence) -> id
  std::uint64_t next_id_ = 0;
  std::uint64_t next_seq_ = 0;
  bool closed_ = false;
  std::size_t bytes_pinned_ = 0;
  std::size_t peak_bytes_pinned_ = 0;
  std::size_t bytes_in_use_ = 0;
  std::size_t bytes_idle_ = 0;
  std::uint64_t blocks_in_use_ = 0;
  std::uint64_t acquisitions_ = 0;
  std::uint64_t reuses_ = 0;
  std::uint64_t system_allocations_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t bytes_evicted_ = 0;
  std::uint64_t failures_ = 0;
  std::uint64_t lock_failures_ = 0;
  std::uint64_t blocks_unlocked_ = 0;
  std::uint64_t blocks_retired_ = 0;
  std::atomic<std::uint64_t> bytes_staged_{0};  // atomic: recordStaged runs outside the mutex, at every kernel launch
  std::atomic<std::uint64_t> staged_operations_{0};
};

}  // namespace detail

// ---- PinnedBlock ----

PinnedBlock::PinnedBlock(PinnedBlock&& other) noexcept
    : state_(std::move(other.state_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      locked_(std::exchange(other.locked_, false)),
      id_(std::exchange(other.id_, 0)) {}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = std::move(other.state_);
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  capacity_ = std::exchange(other.capacity_, 0);
  locked_ = std::exchange(other.locked_, false);
  id_ = std::exchange(other.id_, 0);
  return *this;
}

PinnedBlock::~PinnedBlock() { reset(); }

void PinnedBlock::reset() {
  if (!state_) return;
  std::shared_ptr<detail::PinnedState> state = std::move(state_);  // may be the last owner
  state->release(id_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  locked_ = false;
  id_ = 0;
}

std::string PinnedBlock::sharedName() const { return state_ ? state_->allocator().sharedName(data_) : std::string(); }

Status PinnedBlock::endSharing() {
  if (!state_) return internalError("ending the sharing of an empty pinned block");
  return state_->allocator().endSharing(data_);
}

// ---- PinnedHostPool ----

std::size_t PinnedHostPool::sizeClassOf(std::size_t bytes, std::size_t min_block_bytes) {
  if (bytes <= min_block_bytes) return min_block_bytes;
  constexpr std::size_t kTopClass = std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1);
  if (bytes > kTopClass) return 0;
  std::size_t cls = min_block_bytes;
  while (cls < bytes) cls <<= 1;  // at most 64 doublings
  return cls;
}

StatusOr<PinnedHostPool> PinnedHostPool::create(const PinnedHostPoolOptions& options,
                                                std::shared_ptr<HostAllocator> allocator) {
  if (Status s = validateOptions(options); !s.isOk()) return s.withContext(rankPrefix(options.rank) + "pinned pool");
  if (!allocator) allocator = systemHostAllocator();
  return PinnedHostPool(std::make_shared<detail::PinnedState>(options, std::move(allocator)));
}

PinnedHostPool& PinnedHostPool::operator=(PinnedHostPool&& other) noexcept {
  if (this == &other) return *this;
  close();
  state_ = std::move(other.state_);
  return *this;
}

PinnedHostPool::~PinnedHostPool() { close(); }

void PinnedHostPool::close() {
  if (state_) state_->close();
  state_.reset();
}

StatusOr<PinnedBlock> PinnedHostPool::acquire(std::size_t bytes, PinnedUse use) {
  PR_ASSIGN_OR_RETURN(const detail::PinnedState::Grant grant, state_->acquire(bytes, use));
  PinnedBlock block;
  block.state_ = state_;
  block.data_ = grant.data;
  block.size_ = bytes;
  block.capacity_ = grant.capacity;
  block.locked_ = grant.locked;
  block.id_ = grant.id;
  return block;
}

std::size_t PinnedHostPool::trim() { return state_->trim(true); }
PinnedStats PinnedHostPool::stats() const { return state_->stats(); }
void PinnedHostPool::recordStaged(std::uint64_t bytes) const { state_->recordStaged(bytes); }
const PinnedHostPoolOptions& PinnedHostPool::options() const { return state_->options(); }

}  // namespace peerreduce
