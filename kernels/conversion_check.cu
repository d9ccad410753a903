// The device side of kernels/conversion_check.h: one grid-strided kernel over the inputs.
#include "conversion_check.h"
#include "float16.h"
#include "portability.h"

namespace peerreduce::kernels {
namespace {

__global__ void convertKernel(const std::uint32_t* floats, std::uint64_t float_count, std::uint16_t* to_half,
                              std::uint16_t* to_bf16, const std::uint16_t* patterns, std::uint64_t pattern_count,
                              std::uint32_t* from_half, std::uint32_t* from_bf16) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t i = first; i < float_count; i += stride) {
    const float f = bitCast<float>(floats[i]);
    to_half[i] = floatToHalf(f).bits;
    to_bf16[i] = floatToBFloat16(f).bits;
  }
  for (std::uint64_t i = first; i < pattern_count; i += stride) {
    from_half[i] = bitCast<std::uint32_t>(halfToFloat(Half{patterns[i]}));
    from_bf16[i] = bitCast<std::uint32_t>(bfloat16ToFloat(BFloat16{patterns[i]}));
  }
}

// Device memory for `count` elements of T, freed at the end of the scope.
template <typename T>
struct DeviceArray {
  T* data = nullptr;
  hipError_t made;
  explicit DeviceArray(std::size_t count) : made(hipMalloc(reinterpret_cast<void**>(&data), count * sizeof(T) + 1)) {}
  ~DeviceArray() {
    if (data != nullptr) (void)hipFree(data);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

std::string failed(const char* what, hipError_t error) { return std::string(what) + ": " + hipGetErrorString(error); }

}  // namespace

std::string convertFloat16OnDevice(Float16Conversions& c) {
  const std::size_t nf = c.floats.size();
  const std::size_t np = c.patterns.size();
  c.to_half.assign(nf, 0);
  c.to_bf16.assign(nf, 0);
  c.from_half.assign(np, 0);
  c.from_bf16.assign(np, 0);
  DeviceArray<std::uint32_t> floats(nf), from_half(np), from_bf16(np);
  DeviceArray<std::uint16_t> to_half(nf), to_bf16(nf), patterns(np);
  for (const hipError_t made :
       {floats.made, from_half.made, from_bf16.made, to_half.made, to_bf16.made, patterns.made}) {
    if (made != hipSuccess) return failed("hipMalloc", made);
  }
  hipError_t e = hipMemcpy(floats.data, c.floats.data(), nf * sizeof(std::uint32_t), hipMemcpyHostToDevice);
  if (e == hipSuccess)
    e = hipMemcpy(patterns.data, c.patterns.data(), np * sizeof(std::uint16_t), hipMemcpyHostToDevice);
  if (e != hipSuccess) return failed("hipMemcpy to the device", e);
  convertKernel<<<264, 256>>>(floats.data, nf, to_half.data, to_bf16.data, patterns.data, np, from_half.data,
                              from_bf16.data);
  e = hipGetLastError();
  if (e == hipSuccess) e = hipDeviceSynchronize();
  if (e != hipSuccess) return failed("the conversion kernel", e);
  e = hipMemcpy(c.to_half.data(), to_half.data, nf * sizeof(std::uint16_t), hipMemcpyDeviceToHost);
  if (e == hipSuccess) e = hipMemcpy(c.to_bf16.data(), to_bf16.data, nf * sizeof(std::uint16_t), hipMemcpyDeviceToHost);
  if (e == hipSuccess) {
    e = hipMemcpy(c.from_half.data(), from_half.data, np * sizeof(std::uint32_t), hipMemcpyDeviceToHost);
  }
  if (e == hipSuccess) {
    e = hipMemcpy(c.from_bf16.data(), from_bf16.data, np * sizeof(std::uint32_t), hipMemcpyDeviceToHost);
  }
  if (e != hipSuccess) return failed("hipMemcpy to the host", e);
  return "";
}

}  // namespace peerreduce::kernels
