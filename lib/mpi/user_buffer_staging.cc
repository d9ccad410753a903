#include "mpi/user_buffer_staging.h"

#include <algorithm>
#include <string>

namespace peerreduce::mpi {
namespace {

// A device buffer of one kind: where it starts, how far it reaches, and the ranges the operation uses
// (one per block it holds: `count` elements every `stride`).
struct DeviceExtent {
  std::byte* begin = nullptr;
  std::size_t bytes = 0;
  int blocks = 1;
  std::size_t stride_bytes = 0;
};

DeviceExtent extentOf(const ExecutionRequest& request, BufferKind kind, const void* ptr) {
  const Plan& plan = *request.plan;
  const std::size_t elem = dataTypeSize(request.dtype);
  DeviceExtent extent;
  extent.begin = static_cast<std::byte*>(const_cast<void*>(ptr));
  extent.blocks = holdsEveryBlock(plan.collective, kind) ? plan.num_blocks : 1;
  extent.stride_bytes = blockStrideOf(plan.collective, kind, request.block_stride) * elem;
  extent.bytes = static_cast<std::size_t>(extent.blocks - 1) * extent.stride_bytes + request.count * elem;
  return extent;
}

}  // namespace

DeviceMemory platformDeviceMemory(int rank) {
  DeviceMemory device;
  device.is_device = isDeviceBuffer;
  device.copy = [rank](void* dst, const void* src, std::size_t bytes, StreamHandle stream) {
    return copyOnStream(dst, src, bytes, stream, rank);
  };
  device.wait = [rank](StreamHandle stream) { return waitForStream(stream, rank); };
  return device;
}

UserBufferStaging::UserBufferStaging(int rank, std::size_t pinned_limit_bytes, DeviceMemory device)
    : rank_(rank),
      pinned_limit_bytes_(pinned_limit_bytes),
      device_(device.is_device ? std::move(device) : platformDeviceMemory(rank)) {}

Status UserBufferStaging::pool() {
  if (pool_) return Status::ok();
  PinnedHostPoolOptions options;
  options.limit_bytes = pinned_limit_bytes_;
  options.rank = rank_;
  PR_ASSIGN_OR_RETURN(PinnedHostPool created, PinnedHostPool::create(options));
  pool_ = std::make_unique<PinnedHostPool>(std::move(created));
  return Status::ok();
}

StatusOr<HostBuffers> UserBufferStaging::stageIn(const ExecutionRequest& request, StreamHandle stream) {
  discard();
  HostBuffers host{request.send, request.recv};
  const bool send_on_device = request.send != nullptr && request.count > 0 && device_.is_device(request.send);
  const bool recv_on_device = request.recv != nullptr && request.count > 0 && device_.is_device(request.recv);
  if (!send_on_device && !recv_on_device) return host;

  const DeviceExtent send = extentOf(request, BufferKind::kInput, request.send);
  const DeviceExtent recv = extentOf(request, BufferKind::kOutput, request.recv);
  // One pinned block holds every device buffer of the operation: overlapping ones at their distance from
  // each other (so they stay overlapping), disjoint ones back to back.
  std::size_t send_at = 0;
  std::size_t recv_at = 0;
  std::size_t total = 0;
  const bool overlap =
      send_on_device && recv_on_device && send.begin < recv.begin + recv.bytes && recv.begin < send.begin + send.bytes;
  if (overlap) {
    std::byte* const begin = std::min(send.begin, recv.begin);
    send_at = static_cast<std::size_t>(send.begin - begin);
    recv_at = static_cast<std::size_t>(recv.begin - begin);
    total = static_cast<std::size_t>(std::max(send.begin + send.bytes, recv.begin + recv.bytes) - begin);
  } else {
    if (send_on_device) total += send.bytes;
    if (recv_on_device) {
      recv_at = total;
      total += recv.bytes;
    }
  }
  PR_RETURN_IF_ERROR(pool());
  PR_ASSIGN_OR_RETURN(block_, pool_->acquire(total));
  auto* base = static_cast<std::byte*>(block_.data());
  std::byte* host_send = base + send_at;
  std::byte* host_recv = base + recv_at;

  stream_ = stream;
  const std::size_t block_bytes = request.count * dataTypeSize(request.dtype);
  if (send_on_device) {
    for (int b = 0; b < send.blocks; ++b) {
      const std::size_t at = static_cast<std::size_t>(b) * send.stride_bytes;
      PR_RETURN_IF_ERROR(device_.copy(host_send + at, send.begin + at, block_bytes, stream));
    }
    PR_RETURN_IF_ERROR(device_.wait(stream));
    host.send = host_send;
  }
  if (recv_on_device) {
    for (int b = 0; b < recv.blocks; ++b) {
      const std::size_t at = static_cast<std::size_t>(b) * recv.stride_bytes;
      copy_out_.push_back(CopyRange{recv.begin + at, host_recv + at, block_bytes});
    }
    host.recv = host_recv;
  }
  return host;
}

Status UserBufferStaging::stageOut() {
  Status status;
  for (const CopyRange& range : copy_out_) {
    status = device_.copy(range.device, range.host, range.bytes, stream_);
    if (!status.isOk()) break;
  }
  if (status.isOk() && !copy_out_.empty()) status = device_.wait(stream_);
  discard();
  return status;
}

void UserBufferStaging::discard() {
  copy_out_.clear();
  block_.reset();
}

}  // namespace peerreduce::mpi
