// SharedHostSegment: host memory that other processes of this machine map by name (internal).
//
// Host-staged links need memory that two processes (two ranks, often on two GPUs without peer access)
// both address: the owner creates a POSIX shared-memory segment (shm_open with a fresh name, O_EXCL),
// sizes and maps it; a peer maps the same pages by name. The GPU runtime then registers the mapping in
// each process (gpu/gpu_host_allocator.cc), so kernels read and write it through device pointers.
//
// Names: "/peerreduce-<pid>-<sequence>-<salt>", at most kMaxSharedNameBytes - 1 characters, so a name
// fits a fixed field of the GPU peer record. The owner removes the name (unlink) as soon as every peer
// mapped the segment; the pages live while any mapping does. Every failed create removes what it made,
// and an owner's segment whose name is still linked is unlinked when the owner's handle dies, so only
// a process killed between creation and the peers' mapping leaves a name behind (its pid is in it).
//
// Host-only (no GPU header): created, opened, unlinked and failed in the CPU tests
// (tests/lib/memory/shared_host_segment_test.cc).
//
// Example:
//   auto mine = SharedHostSegment::create(1 << 20).value();         // owner
//   auto theirs = SharedHostSegment::open(mine.name(), 1 << 20);     // a peer process
//   mine.unlink();                                                   // once every peer mapped it
#pragma once

#include <cstddef>
#include <string>

#include "peerreduce/status.h"

namespace peerreduce {

// Bytes of a segment name's field, its terminating NUL included.
inline constexpr std::size_t kMaxSharedNameBytes = 64;

class SharedHostSegment {
 public:
  // A new segment of at least `bytes` (rounded up to pages), zero-filled. kInvalidArgument for 0;
  // kOutOfMemory when the system cannot size or map it; kUnavailable when shared memory cannot be
  // created (no /dev/shm, permissions); each names the segment and the errno.
  static StatusOr<SharedHostSegment> create(std::size_t bytes);
  // Maps `owner`'s segment `name` of `bytes`. kInvalidArgument for a malformed name (not one
  // create() makes); kUnavailable when it no longer exists (the owner exited or unlinked it before
  // this rank mapped it); kMismatch when it is smaller than `bytes`.
  static StatusOr<SharedHostSegment> open(const std::string& name, std::size_t bytes);

  SharedHostSegment(SharedHostSegment&& other) noexcept;
  SharedHostSegment& operator=(SharedHostSegment&& other) noexcept;
  SharedHostSegment(const SharedHostSegment&) = delete;
  SharedHostSegment& operator=(const SharedHostSegment&) = delete;
  ~SharedHostSegment();  // unmaps; an owner also unlinks a name still linked

  void* data() const { return data_; }
  std::size_t size() const { return size_; }  // mapped bytes (a multiple of the page size)
  const std::string& name() const { return name_; }
  bool owner() const { return owner_; }
  bool linked() const { return linked_; }
  // Removes the name (owner only; a second call does nothing). Mappings stay valid. kInternal when
  // the system refuses, naming the errno.
  Status unlink();

  // Whether `name` has the form create() gives (the check open() makes), for record validation.
  static bool wellFormedName(const std::string& name);

 private:
  SharedHostSegment(std::string name, void* data, std::size_t size, bool owner)
      : name_(std::move(name)), data_(data), size_(size), owner_(owner), linked_(owner) {}
  void close();

  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool owner_ = false;
  bool linked_ = false;
};

}  // namespace peerreduce
