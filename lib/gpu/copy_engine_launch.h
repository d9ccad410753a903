// Enqueues one operation whose program has copy-engine copies (Step::copy_engine) on a GPU stream, part
// by part (gpu/copy_engine_schedule.h): interpreter launches over ranges of steps on the operation's
// stream, and each part's copies as runtime copies (hipMemcpyAsync: the copy engines) on side streams,
// one per queue (a peer and a direction), forked from the operation's stream by an event before the
// part's launch and joined back by events after it. Only stream-ordered calls are made, so the operation
// can be captured into a graph (the side streams join the capture through the fork event and leave it at
// the join) and replayed; nothing here waits on the host.
//
// Why runtime copies and not a stream memory operation for the signal: a plan signal increments a
// counter whose absolute value depends on the epochs of earlier operations (kept on the device so graphs
// replay), which a write of a value fixed at enqueue time cannot follow. The signal after a copy is
// therefore the interpreter's, in the launch that follows the copy's join: stream order puts it after
// the copy has landed, and the launch fences before it signals.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "device_plan.h"
#include "gpu/copy_engine_schedule.h"
#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"
#include "portability.h"

namespace peerreduce::gpu {

// Where the chunks of one operation live, as the host sees them (the kernels' resolve(), on the host).
struct CopyAddressing {
  Collective collective = Collective::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  ChunkLayout layout;
  std::size_t block_stride = 0;  // ExecutionRequest::block_stride
  std::size_t elem_size = 1;
  std::uint64_t scratch_offset = 0;
  std::uint64_t slot_bytes = 0;
  const std::vector<unsigned char*>* scratch = nullptr;  // every rank's scratch base, as mapped here
  unsigned char* private_scratch = nullptr;              // this rank's private slots, where apart (LaunchArgs)
  int first_private_slot = 0;
};

class CopyEngineLauncher {
 public:
  CopyEngineLauncher(int rank, int device, int world_size) : rank_(rank), device_(device), world_size_(world_size) {}
  CopyEngineLauncher(const CopyEngineLauncher&) = delete;
  CopyEngineLauncher& operator=(const CopyEngineLauncher&) = delete;
  ~CopyEngineLauncher() { release(); }

  // `args`: the operation's interpreter arguments (part and range are set here). Side streams and events
  // of `channel` are made at its first use.
  Status enqueue(const std::vector<ScheduledPart>& parts, const RankProgram& program, const LaunchArgs& args,
                 const CopyAddressing& where, int dtype, unsigned blocks, int channel, hipStream_t stream);
  // Destroys the side streams and events (the caller has synchronised the device).
  void release();

 private:
  struct Slot {
    hipEvent_t forked = nullptr;
    std::vector<hipStream_t> side;  // per queue, made at first use
    std::vector<hipEvent_t> joined;
  };
  Status ensureQueue(Slot& slot, int queue);
  unsigned char* address(const CopyAddressing& where, const BufferRef& ref, int chunk) const;

  int rank_;
  int device_;
  int world_size_;
  std::array<Slot, kMaxChannels> slots_;
};

}  // namespace peerreduce::gpu
