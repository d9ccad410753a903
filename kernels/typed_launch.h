// Kernel families compiled per group of element types (the plan interpreter's too, in
// kernels/plan_kernels_<group>.cu: in one file it became the build's longest compile once the others were split). Every
// dtype x op of a family is its own instantiation, and in one file per family the push and fused kernels were the
// longest compiles of a build (at -O3 for sm_90 on two cores: push_kernels.cu 250 s, fused_kernels.cu 173 s, the next
// file 100 s, where the whole GPU machine's build took 232-250 s on 32 cores), so each group of types is its own file
// (kernels/typed_kernels_<group>.cu) and a build on many cores compiles them side by side. A family's entry
// points (kernels/push_kernels.cu, kernels/fused_kernels.cu) see only the declarations below and pick the
// type; the group files instantiate the definitions (kernels/push_kernels.cuh, kernels/fused_kernels.cuh). A
// type no group instantiates is an undefined symbol when the library links, so none can be left out silently.
#pragma once

#include <array>
#include <cstdint>

#include "device_plan.h"
#include "dispatch.h"
#include "float16.h"
#include "float8.h"
#include "portability.h"

namespace peerreduce::gpu {

// The pushing two-shot and one-shot (kernels/push_kernels.cuh) for element type T: args.op picks the
// operator; hipErrorInvalidValue for an unknown one.
namespace push {
template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream);
template <typename T>
hipError_t loadFor();
}  // namespace push

// The fused one-shot and two-shot (kernels/fused_kernels.cuh) for element type T, likewise.
namespace fused {
template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream);
template <typename T>
hipError_t loadFor();
}  // namespace fused

// The plan interpreter (kernels/plan_kernels.cuh) for element type T, likewise.
namespace plan {
template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream);
template <typename T>
hipError_t loadFor();
}  // namespace plan

// A family's loadFor<T>: loads the kernels kernelsOf(OpTag<Op>{}) lists (an array of pointers) for every
// op; the first error, if any.
template <typename KernelsOf>
hipError_t loadEveryOp(KernelsOf&& kernelsOf) {
  return kernels::forEveryReduceOp(hipSuccess, [&](auto op) {
    for (const auto kernel : kernelsOf(op)) {
      const hipError_t loaded = loadKernel(kernel);
      if (loaded != hipSuccess) return loaded;
    }
    return hipSuccess;
  });
}

}  // namespace peerreduce::gpu

// The groups: every DataType in exactly one (kernels/dispatch.h maps the values to these types).
#define PR_FLOAT_TYPES(X) X(float) X(double)
#define PR_HALF_TYPES(X) X(kernels::Half) X(kernels::BFloat16)
#define PR_FLOAT8_TYPES(X) X(kernels::Float8E4M3) X(kernels::Float8E5M2)
#define PR_INTEGER_TYPES(X) \
  X(std::int8_t) X(std::uint8_t) X(std::int32_t) X(std::uint32_t) X(std::int64_t) X(std::uint64_t)

// In a group's file, inside namespace peerreduce::gpu: a family's launch and load for element type T. The
// float8 group compiles its push and fused families in files of their own (the longest of the group files).
#define PR_INSTANTIATE_PUSH_KERNELS(T)                                                                 \
  template hipError_t push::launchFor<T>(const LaunchArgs& args, unsigned blocks, hipStream_t stream); \
  template hipError_t push::loadFor<T>();
#define PR_INSTANTIATE_FUSED_KERNELS(T)                                                                 \
  template hipError_t fused::launchFor<T>(const LaunchArgs& args, unsigned blocks, hipStream_t stream); \
  template hipError_t fused::loadFor<T>();
#define PR_INSTANTIATE_TYPED_KERNELS(T) PR_INSTANTIATE_PUSH_KERNELS(T) PR_INSTANTIATE_FUSED_KERNELS(T)
// In a group's kernels/plan_kernels_<group>.cu: the plan interpreter's launch and load for element type T.
#define PR_INSTANTIATE_PLAN_KERNELS(T)                                                                 \
  template hipError_t plan::launchFor<T>(const LaunchArgs& args, unsigned blocks, hipStream_t stream); \
  template hipError_t plan::loadFor<T>();
