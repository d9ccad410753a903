// CallbackBootstrap: a Bootstrap carried by the application's own rendezvous (torch.distributed, a
// key-value store, Ray, an MPI peerreduce was not built with), given as callbacks.
//
// The application supplies an all-gather of fixed-size byte blocks (and optionally a barrier); this
// class makes it safe to build a communicator on:
// - every block travels in a frame (magic, rank, world size, collective sequence number, length), so a
//   callback that delivers the wrong number of bytes, blocks in the wrong order, or blocks of a rank with
//   another world size or at another collective is a typed error naming the rank and what was wrong,
//   never a silent misread;
// - each call runs on a thread of its own and is bounded by the caller's timeout: a callback that does
//   not return in time gives kTimeout naming the rank and the callback, and leaves the bootstrap broken
//   (every later call refuses at once), because the callback may still write into its buffers. Those
//   buffers belong to the bootstrap's call state, never to the caller, so a late write touches nothing
//   freed. The callback also receives the timeout, so a well-behaved one can stop itself;
// - a callback that fails (nonzero result) gives kUnavailable naming the rank, the callback and its code.
// Callbacks therefore run on a peerreduce thread, one call at a time: an MPI-based callback needs
// MPI_THREAD_SERIALIZED (or use the MPI bootstrap, which polls on the caller's thread).
//
// Thread safety: one thread at a time per bootstrap, like every Bootstrap.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"

namespace peerreduce {

struct BootstrapCallbacks {
  // Every rank contributes `bytes` bytes from `send`; `recv` (nranks x bytes) receives block r from rank
  // r. `*gathered` is set to the bytes delivered. Returns 0 on success, else an error code of the
  // application's. Should give up after `timeout_ms`.
  std::function<int(const void* send, void* recv, std::size_t bytes, std::size_t* gathered, std::int64_t timeout_ms)>
      all_gather;
  // Optional: returns once every rank entered (0) or an error code. Without it, barrier is an all-gather.
  std::function<int(std::int64_t timeout_ms)> barrier;
  // Names the bootstrap in errors ("torch.distributed store", "application callbacks").
  std::string name = "application bootstrap callbacks";
};

// Framing of each block: what every rank prepends to its payload.
struct CallbackFrameHeader {
  std::uint32_t magic;
  std::uint32_t rank;
  std::uint32_t world_size;
  std::uint32_t length;    // payload bytes
  std::uint64_t sequence;  // collective number on this bootstrap, from 0
};
inline constexpr std::uint32_t kCallbackFrameMagic = 0x50524246;  // "PRBF"

// kInvalidArgument for a rank outside 0..size-1, a size outside 1..kMaxWorldSize or a missing all_gather.
StatusOr<std::shared_ptr<Bootstrap>> createCallbackBootstrap(int rank, int size, BootstrapCallbacks callbacks);

}  // namespace peerreduce
