// SimBufferRegistry: the simulated world's user-buffer exports (what GPU IPC handles are on devices).
//
// One per simulated world, shared by its transports. A rank exports an allocation of its host memory;
// the record names the world, the rank, an export id and the allocation's range. A peer opening a record
// gets the owner's memory at base + offset (ranks share one address space), but only after the record
// is checked against what the owner actually exported and still exports: a record of another world,
// naming another rank, released, forged or truncated is refused (kCorrupt), and a range outside the
// exported allocation is kInvalidArgument. So a simulated run catches the handle mistakes a GPU run
// would turn into a fault or silent corruption.
//
// Allocations: the simulator plays cuMemGetAddressRange. Memory a test declares with trackAllocation is
// one allocation (as if from cudaMalloc); any other range counts as an allocation of its own.
//
// Thread safety: every method takes the registry's mutex (ranks are threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce::sim {

class SimBufferRegistry {
 public:
  SimBufferRegistry(int world_size, std::uint64_t world_id);

  // Declares [base, base + bytes) as one allocation of `rank`. kInvalidArgument for a null or empty
  // range, one overlapping another tracked allocation of the rank, or a rank outside the world.
  Status trackAllocation(int rank, const void* base, std::size_t bytes);
  // Forgets a tracked allocation (as cudaFree would); kInvalidArgument when `base` is not one.
  Status untrackAllocation(int rank, const void* base);

  StatusOr<BufferAllocation> allocationOf(int rank, const void* ptr, std::size_t bytes) const;
  StatusOr<std::vector<std::byte>> exportBuffer(int rank, const void* base, std::size_t bytes);
  void releaseBuffer(int rank, const void* base);
  StatusOr<PeerBufferView> openPeerBuffer(int rank, int peer, const std::vector<std::byte>& record, std::size_t offset,
                                          std::size_t bytes) const;

  // Exports of `rank` not yet released (tests: registrations go with their communicator).
  std::size_t liveExports(int rank) const;

 private:
  struct Export {
    std::uint64_t id = 0;
    std::size_t bytes = 0;
  };
  struct RankTables {
    std::map<std::uintptr_t, std::size_t> allocations;  // tracked: base -> bytes
    std::map<std::uintptr_t, Export> exports;           // by allocation base
  };
  Status checkRank(int rank, const char* what) const;

  const int world_size_;
  const std::uint64_t world_id_;
  mutable std::mutex mutex_;
  std::vector<RankTables> ranks_;
  std::uint64_t next_export_id_ = 1;  // ids are never reused, so a released record stays dead
};

}  // namespace peerreduce::sim
