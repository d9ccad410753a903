// GPU staging (device_staging.h): a device buffer and a non-blocking stream on the communicator's device,
// through the portability header's runtime names.
#include <string>

#include "gpu/gpu_check.h"
#include "nccl/device_staging.h"
#include "util/log.h"

namespace peerreduce::nccl {
namespace {

class GpuStaging final : public DeviceStaging {
 public:
  explicit GpuStaging(int device) : device_(device) {}

  ~GpuStaging() override {
    if (stream_ == nullptr) return;
    // A collective that timed out may still be writing the buffers: they are freed only once the stream is
    // idle. Waiting here could block for ever, so a busy stream's memory is left to the process instead.
    if (hipSetDevice(device_) != hipSuccess || hipStreamQuery(stream_) != hipSuccess) {
      PR_WARN(-1, "nccl: the bootstrap stream of device %d is still busy; its staging memory (%zu bytes) is kept",
              device_, send_bytes_ + recv_bytes_);
      return;
    }
    hipFree(send_);
    hipFree(recv_);
    hipStreamDestroy(stream_);
  }

  Status create() {
    PR_GPU_CHECK(-1, hipSetDevice(device_));
    PR_GPU_CHECK(-1, hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking));
    return Status::ok();
  }

  Status bindThread() override {
    PR_GPU_CHECK(-1, hipSetDevice(device_));
    return Status::ok();
  }

  Status reserve(std::size_t send_bytes, std::size_t recv_bytes) override {
    PR_RETURN_IF_ERROR(grow(send_, send_bytes_, send_bytes));
    return grow(recv_, recv_bytes_, recv_bytes);
  }
  void* sendBuffer() override { return send_; }
  void* recvBuffer() override { return recv_; }
  void* stream() override { return stream_; }

  Status upload(const void* host, std::size_t bytes) override {
    if (bytes > send_bytes_) return internalError("staging upload larger than the reserved send buffer");
    PR_GPU_CHECK(-1, hipMemcpyAsync(send_, host, bytes, hipMemcpyHostToDevice, stream_));
    return Status::ok();
  }

  StatusOr<bool> done() override {
    const hipError_t state = hipStreamQuery(stream_);
    if (state == hipSuccess) return true;
    if (state == hipErrorNotReady) return false;
    return gpu::gpuError(state, "hipStreamQuery", __FILE__, __LINE__, -1);
  }

  Status download(void* host, std::size_t bytes) override {
    if (bytes > recv_bytes_) return internalError("staging download larger than the reserved receive buffer");
    // The stream is idle (done() said so), so this copy does not wait on anything else.
    PR_GPU_CHECK(-1, hipMemcpy(host, recv_, bytes, hipMemcpyDeviceToHost));
    return Status::ok();
  }

 private:
  // Buffers only grow, and only while the stream is idle (every collective waits for done()).
  Status grow(void*& buffer, std::size_t& have, std::size_t need) {
    if (need <= have) return Status::ok();
    if (buffer != nullptr) PR_GPU_CHECK(-1, hipFree(buffer));
    buffer = nullptr;
    have = 0;
    PR_GPU_CHECK(-1, hipMalloc(&buffer, need));
    have = need;
    return Status::ok();
  }

  int device_;
  hipStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::size_t send_bytes_ = 0;
  std::size_t recv_bytes_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<DeviceStaging>> createGpuStaging(int device) {
  auto staging = std::make_unique<GpuStaging>(device);
  PR_RETURN_IF_ERROR(staging->create());
  return std::unique_ptr<DeviceStaging>(std::move(staging));
}

}  // namespace peerreduce::nccl
