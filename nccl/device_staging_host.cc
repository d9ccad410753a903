// Host staging (device_staging.h): the records stay in host memory, for an NCCL that moves host memory.
#include <cstring>
#include <vector>

#include "nccl/device_staging.h"

namespace peerreduce::nccl {
namespace {

class HostStaging final : public DeviceStaging {
 public:
  Status bindThread() override { return Status::ok(); }
  Status reserve(std::size_t send_bytes, std::size_t recv_bytes) override {
    if (send_.size() < send_bytes) send_.resize(send_bytes);
    if (recv_.size() < recv_bytes) recv_.resize(recv_bytes);
    return Status::ok();
  }
  void* sendBuffer() override { return send_.data(); }
  void* recvBuffer() override { return recv_.data(); }
  void* stream() override { return nullptr; }
  Status upload(const void* host, std::size_t bytes) override {
    if (bytes > send_.size()) return internalError("staging upload larger than the reserved send buffer");
    if (bytes > 0) std::memcpy(send_.data(), host, bytes);
    return Status::ok();
  }
  // The NCCL that moves host memory completes each call before returning.
  StatusOr<bool> done() override { return true; }
  Status download(void* host, std::size_t bytes) override {
    if (bytes > recv_.size()) return internalError("staging download larger than the reserved receive buffer");
    if (bytes > 0) std::memcpy(host, recv_.data(), bytes);
    return Status::ok();
  }

 private:
  std::vector<std::byte> send_;
  std::vector<std::byte> recv_;
};

}  // namespace

std::unique_ptr<DeviceStaging> createHostStaging() { return std::make_unique<HostStaging>(); }

}  // namespace peerreduce::nccl
