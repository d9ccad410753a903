#include "gpu/copy_engine_launch.h"

#include <algorithm>
#include <set>
#include <string>

#include "gpu/device_guard.h"
#include "gpu/gpu_check.h"
#include "plan_kernel_launch.h"

namespace peerreduce::gpu {

unsigned char* CopyEngineLauncher::address(const CopyAddressing& where, const BufferRef& ref, int chunk) const {
  if (ref.kind == BufferKind::kScratch) {
    const std::uint64_t offset = where.scratch_offset + static_cast<std::uint64_t>(ref.slot) * where.slot_bytes;
    // Verified plans name only their own rank's private slots.
    if (where.private_scratch != nullptr && ref.slot >= where.first_private_slot) return where.private_scratch + offset;
    return (*where.scratch)[static_cast<std::size_t>(ref.rank)] + offset;
  }
  const std::size_t offset = userChunkOffset(where.collective, ref.kind, where.layout, where.block_stride, chunk);
  unsigned char* base = ref.kind == BufferKind::kInput
                            ? const_cast<unsigned char*>(static_cast<const unsigned char*>(where.send))
                            : static_cast<unsigned char*>(where.recv);
  return base + offset * where.elem_size;
}

Status CopyEngineLauncher::ensureQueue(Slot& slot, int queue) {
  if (slot.forked == nullptr) {
    PR_GPU_CHECK(rank_, hipEventCreateWithFlags(&slot.forked, hipEventDisableTiming));
    slot.side.assign(2 * static_cast<std::size_t>(world_size_), nullptr);
    slot.joined.assign(2 * static_cast<std::size_t>(world_size_), nullptr);
  }
  const auto q = static_cast<std::size_t>(queue);
  if (slot.side[q] == nullptr) {
    PR_GPU_CHECK(rank_, hipStreamCreateWithFlags(&slot.side[q], hipStreamNonBlocking));
    PR_GPU_CHECK(rank_, hipEventCreateWithFlags(&slot.joined[q], hipEventDisableTiming));
  }
  return Status::ok();
}

Status CopyEngineLauncher::enqueue(const std::vector<ScheduledPart>& parts, const RankProgram& program,
                                   const LaunchArgs& args, const CopyAddressing& where, int dtype, unsigned blocks,
                                   int channel, hipStream_t stream) {
  if (channel < 0 || channel >= kMaxChannels) {
    return invalidArgumentError("rank " + std::to_string(rank_) + ": channel " + std::to_string(channel));
  }
  Slot& slot = slots_[static_cast<std::size_t>(channel)];
  for (const ScheduledPart& part : parts) {
    for (const EngineCopy& copy : part.copies) PR_RETURN_IF_ERROR(ensureQueue(slot, copy.queue));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const ScheduledPart& part = parts[i];
    LaunchArgs launch = args;
    launch.fused = 0;  // the plan interpreter, over this part's range
    launch.part = (i == 0 ? kLaunchPartFirst : 0) | (i + 1 == parts.size() ? kLaunchPartLast : 0);
    if (launch.part == 0) launch.part = kLaunchPartMiddle;
    launch.step_begin = part.begin;
    launch.step_end = part.end;
    // Programmatic overlap would let a launch begin before the join it follows: launches stay ordinary.
    launch.overlap_launch = 0;
    const bool kernel = part.has_kernel_work || launch.part != kLaunchPartMiddle;
    if (part.copies.empty()) {
      if (kernel) PR_GPU_CHECK(rank_, launchPlanKernel(launch, dtype, blocks, stream));
      continue;
    }
    std::set<int> queues;
    for (const EngineCopy& copy : part.copies) queues.insert(copy.queue);
    // Fork: the copies start after everything before this part on the operation's stream.
    PR_GPU_CHECK(rank_, hipEventRecord(slot.forked, stream));
    for (int q : queues)
      PR_GPU_CHECK(rank_, hipStreamWaitEvent(slot.side[static_cast<std::size_t>(q)], slot.forked, 0));
    if (kernel) PR_GPU_CHECK(rank_, launchPlanKernel(launch, dtype, blocks, stream));
    for (const EngineCopy& copy : part.copies) {
      const Step& step = program.steps[copy.step];
      const std::size_t bytes = where.layout.size(where.layout.chunkOf(step.chunk)) * where.elem_size;
      if (bytes == 0) continue;
      unsigned char* dst = address(where, step.dst, step.chunk);
      const unsigned char* src = address(where, program.sources[step.src_begin], step.chunk);
      PR_GPU_CHECK(rank_,
                   hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, slot.side[static_cast<std::size_t>(copy.queue)]));
    }
    // Join: what follows the part on the operation's stream (its signals) waits for every copy.
    for (int q : queues) {
      const auto index = static_cast<std::size_t>(q);
      PR_GPU_CHECK(rank_, hipEventRecord(slot.joined[index], slot.side[index]));
      PR_GPU_CHECK(rank_, hipStreamWaitEvent(stream, slot.joined[index], 0));
    }
  }
  return Status::ok();
}

void CopyEngineLauncher::release() {
  if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.forked != nullptr; })) return;
  const DeviceGuard on_device = DeviceGuard::enterQuietly(device_);
  for (Slot& slot : slots_) {
    for (hipStream_t s : slot.side) {
      if (s != nullptr) (void)hipStreamDestroy(s);
    }
    for (hipEvent_t e : slot.joined) {
      if (e != nullptr) (void)hipEventDestroy(e);
    }
    if (slot.forked != nullptr) (void)hipEventDestroy(slot.forked);
    slot = Slot{};
  }
}

}  // namespace peerreduce::gpu
