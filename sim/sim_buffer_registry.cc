// SimBufferRegistry: see sim_buffer_registry.h.
#include "sim_buffer_registry.h"

#include <cstring>
#include <string>

namespace peerreduce::sim {
namespace {

// "PRSB": tells a buffer record from the symmetric-region records and from garbage.
constexpr std::uint32_t kBufferRecordMagic = 0x42535250;

// What a peer receives. Fixed layout, copied byte for byte (ranks share one process and one ABI).
struct BufferRecord {
  std::uint32_t magic = kBufferRecordMagic;
  std::uint32_t rank = 0;
  std::uint64_t world_id = 0;
  std::uint64_t export_id = 0;
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
};

std::string range(std::uintptr_t base, std::size_t bytes) {
  return "[" + std::to_string(base) + ", +" + std::to_string(bytes) + ")";
}

// A range a driver could hold: not null, not empty, not past the end of the address space.
Status checkRange(int rank, const char* what, std::uintptr_t p, std::size_t bytes) {
  if (p == 0 || bytes == 0 || bytes > UINTPTR_MAX - p) {
    return invalidArgumentError("rank " + std::to_string(rank) + ": cannot " + what + " " + range(p, bytes) +
                                ": null, empty or past the end of the address space");
  }
  return Status::ok();
}

}  // namespace

SimBufferRegistry::SimBufferRegistry(int world_size, std::uint64_t world_id)
    : world_size_(world_size), world_id_(world_id), ranks_(static_cast<std::size_t>(world_size)) {}

Status SimBufferRegistry::checkRank(int rank, const char* what) const {
  if (rank < 0 || rank >= world_size_) {
    return invalidArgumentError(std::string(what) + ": rank " + std::to_string(rank) + " is outside 0.." +
                                std::to_string(world_size_ - 1));
  }
  return Status::ok();
}

Status SimBufferRegistry::trackAllocation(int rank, const void* base, std::size_t bytes) {
  PR_RETURN_IF_ERROR(checkRank(rank, "tracking a simulated allocation"));
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  PR_RETURN_IF_ERROR(checkRange(rank, "track allocation", b, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  auto& allocations = ranks_[static_cast<std::size_t>(rank)].allocations;
  auto next = allocations.lower_bound(b);
  const bool overlaps_next = next != allocations.end() && next->first < b + bytes;
  const bool overlaps_prev = next != allocations.begin() && std::prev(next)->first + std::prev(next)->second > b;
  if (overlaps_next || overlaps_prev) {
    const auto& other = overlaps_next ? *next : *std::prev(next);
    return invalidArgumentError("rank " + std::to_string(rank) + ": allocation " + range(b, bytes) +
                                " overlaps the tracked allocation " + range(other.first, other.second));
  }
  allocations.emplace(b, bytes);
  return Status::ok();
}

Status SimBufferRegistry::untrackAllocation(int rank, const void* base) {
  PR_RETURN_IF_ERROR(checkRank(rank, "untracking a simulated allocation"));
  std::lock_guard<std::mutex> lock(mutex_);
  auto& allocations = ranks_[static_cast<std::size_t>(rank)].allocations;
  if (allocations.erase(reinterpret_cast<std::uintptr_t>(base)) == 0) {
    return invalidArgumentError("rank " + std::to_string(rank) + ": " +
                                std::to_string(reinterpret_cast<std::uintptr_t>(base)) +
                                " is not the base of a tracked allocation");
  }
  return Status::ok();
}

StatusOr<BufferAllocation> SimBufferRegistry::allocationOf(int rank, const void* ptr, std::size_t bytes) const {
  PR_RETURN_IF_ERROR(checkRank(rank, "resolving an allocation"));
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  PR_RETURN_IF_ERROR(checkRange(rank, "resolve the allocation of buffer", p, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  const auto& allocations = ranks_[static_cast<std::size_t>(rank)].allocations;
  auto it = allocations.upper_bound(p);  // tracked allocations never overlap: only the one below can hold p
  if (it != allocations.begin()) {
    --it;
    if (p - it->first < it->second) return BufferAllocation{reinterpret_cast<const void*>(it->first), it->second};
  }
  return BufferAllocation{ptr, bytes};  // untracked host memory: an allocation of its own
}

StatusOr<std::vector<std::byte>> SimBufferRegistry::exportBuffer(int rank, const void* base, std::size_t bytes) {
  PR_RETURN_IF_ERROR(checkRank(rank, "exporting a buffer"));
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  PR_RETURN_IF_ERROR(checkRange(rank, "export", b, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  auto& exports = ranks_[static_cast<std::size_t>(rank)].exports;
  if (exports.contains(b)) {
    // The registration cache exports each allocation once; a second export means its books are wrong.
    return internalError("rank " + std::to_string(rank) + ": allocation " + range(b, bytes) + " is already exported");
  }
  const BufferRecord record{kBufferRecordMagic, static_cast<std::uint32_t>(rank), world_id_, next_export_id_, b, bytes};
  exports.emplace(b, Export{next_export_id_, bytes});
  ++next_export_id_;
  std::vector<std::byte> out(sizeof(record));
  std::memcpy(out.data(), &record, sizeof(record));
  return out;
}

void SimBufferRegistry::releaseBuffer(int rank, const void* base) {
  if (rank < 0 || rank >= world_size_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ranks_[static_cast<std::size_t>(rank)].exports.erase(reinterpret_cast<std::uintptr_t>(base));
}

StatusOr<PeerBufferView> SimBufferRegistry::openPeerBuffer(int rank, int peer, const std::vector<std::byte>& bytes,
                                                           std::size_t offset, std::size_t length) const {
  PR_RETURN_IF_ERROR(checkRank(rank, "opening a peer buffer"));
  const std::string who = "rank " + std::to_string(rank) + " opening a buffer of rank " + std::to_string(peer) + ": ";
  if (peer < 0 || peer >= world_size_) {
    return invalidArgumentError(who + "no such rank in a world of " + std::to_string(world_size_));
  }
  if (bytes.size() != sizeof(BufferRecord)) {
    return corruptError(who + "record of " + std::to_string(bytes.size()) + " bytes, expected " +
                        std::to_string(sizeof(BufferRecord)));
  }
  BufferRecord record;
  std::memcpy(&record, bytes.data(), sizeof(record));
  if (record.magic != kBufferRecordMagic) return corruptError(who + "record is not a simulator buffer record (magic)");
  if (record.world_id != world_id_) {
    return corruptError(who + "record belongs to simulated world " + std::to_string(record.world_id) + ", not " +
                        std::to_string(world_id_));
  }
  if (record.rank != static_cast<std::uint32_t>(peer)) {
    return corruptError(who + "record names rank " + std::to_string(record.rank));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto& exports = ranks_[static_cast<std::size_t>(peer)].exports;
  const auto it = exports.find(static_cast<std::uintptr_t>(record.base));
  if (it == exports.end() || it->second.id != record.export_id || it->second.bytes != record.bytes) {
    return corruptError(who + "record names export " + std::to_string(record.export_id) + " of " +
                        range(static_cast<std::uintptr_t>(record.base), record.bytes) +
                        ", which that rank does not export (released, or not its record)");
  }
  if (length == 0 || offset > record.bytes || length > record.bytes - offset) {
    return invalidArgumentError(who + "range at offset " + std::to_string(offset) + " of " + std::to_string(length) +
                                " bytes is outside the registered allocation of " + std::to_string(record.bytes) +
                                " bytes");
  }
  auto* base = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(record.base));
  return PeerBufferView{peer, base + offset, length};
}

std::size_t SimBufferRegistry::liveExports(int rank) const {
  if (rank < 0 || rank >= world_size_) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  return ranks_[static_cast<std::size_t>(rank)].exports.size();
}

}  // namespace peerreduce::sim
