// The host's half of the contract between plans and kernels: the values the host copies into device
// structures (DeviceStep::kind, DeviceRef::kind, LaunchArgs::fused) are the plan's own, unchanged. These
// assertions fail the build if either side renumbers. Included by every file that fills those fields.
#pragma once

#include <cstdint>

#include "device_plan.h"
#include "gpu/fused_shape.h"
#include "peerreduce/plan.h"
#include "plan/plan_text.h"

namespace peerreduce::gpu {

static_assert(kDeviceBufferInput == static_cast<std::int32_t>(BufferKind::kInput));
static_assert(kDeviceBufferOutput == static_cast<std::int32_t>(BufferKind::kOutput));
static_assert(kDeviceBufferScratch == static_cast<std::int32_t>(BufferKind::kScratch));
static_assert(kDeviceStepCopy == static_cast<std::int32_t>(StepKind::kCopy));
static_assert(kDeviceStepReduce == static_cast<std::int32_t>(StepKind::kReduce));
static_assert(kDeviceStepSignal == static_cast<std::int32_t>(StepKind::kSignal));
static_assert(kDeviceStepWait == static_cast<std::int32_t>(StepKind::kWait));
// The pulling kernels' args.fused values are the plan's fused shapes' (the host sets args.fused from the
// kernel it chooses, kernel_choice.h; the other collectives' shapes run only as lines, kLowLatency*).
static_assert(kFusedOneShot == static_cast<std::int32_t>(FusedKind::kOneShot));
static_assert(kFusedTwoShot == static_cast<std::int32_t>(FusedKind::kTwoShot));
static_assert(static_cast<std::int32_t>(FusedKind::kNone) == 0, "fused 0 means: interpret the plan");
// A plan file that parses runs on the GPU as far as its size goes: the format's limits are the kernels'.
static_assert(kMaxPlanTextFlags == kMaxPlanFlags, "plan files name exactly the flags the kernels hold");
static_assert(kMaxPlanTextSources == kMaxRanks + 1, "a plan file's reduce folds at most what a kernel step takes");

}  // namespace peerreduce::gpu
