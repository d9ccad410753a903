// A test buffer in device memory (the hardware world providers).
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "portability.h"
#include "test_world.h"

namespace peerreduce::testing {

class DeviceBuffer final : public TestBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (hipMalloc(&data_, bytes == 0 ? 1 : bytes) != hipSuccess) {
      std::fprintf(stderr, "peerreduce tests: hipMalloc of %zu bytes failed\n", bytes);
      std::abort();
    }
  }
  ~DeviceBuffer() override { (void)hipFree(data_); }
  void* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }
  void upload(const void* host, std::size_t offset, std::size_t bytes) override {
    if (bytes) (void)hipMemcpy(static_cast<unsigned char*>(data_) + offset, host, bytes, hipMemcpyHostToDevice);
    // A copy from pageable memory may return before its DMA lands, and it is ordered only with the
    // legacy default stream: wait, so a kernel on any stream sees the data.
    (void)hipDeviceSynchronize();
  }
  void download(void* host, std::size_t offset, std::size_t bytes) const override {
    if (bytes) (void)hipMemcpy(host, static_cast<const unsigned char*>(data_) + offset, bytes, hipMemcpyDeviceToHost);
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

}  // namespace peerreduce::testing
