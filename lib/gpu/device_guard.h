// The caller's current device is the caller's: every entry point of the GPU transport that needs its
// device current makes it so for its own duration and gives the calling thread its device back after
// (NCCL's rule). Before, the transport set its device and never restored it, so a program whose ranks
// drive one GPU each but whose thread had another device current (a tensor-parallel subgroup, a
// framework's current device) found its device changed behind its back.
#pragma once

#include "gpu/gpu_check.h"
#include "peerreduce/status.h"
#include "portability.h"

namespace peerreduce::gpu {

class DeviceGuard {
 public:
  // Makes `device` current; the destructor restores the thread's device as it was. Skips both calls when
  // `device` is already current (the common case: one thread, one device).
  static StatusOr<DeviceGuard> enter(int device, int rank) {
    int previous = -1;
    PR_GPU_CHECK(rank, hipGetDevice(&previous));
    if (previous != device) PR_GPU_CHECK(rank, hipSetDevice(device));
    return DeviceGuard(previous != device ? previous : -1);
  }
  // For teardown paths that cannot report: best effort, the same restoration.
  static DeviceGuard enterQuietly(int device) {
    int previous = -1;
    if (hipGetDevice(&previous) != hipSuccess || previous == device) return DeviceGuard(-1);
    return DeviceGuard(hipSetDevice(device) == hipSuccess ? previous : -1);
  }

  DeviceGuard(DeviceGuard&& other) noexcept : restore_(other.restore_) { other.restore_ = -1; }
  DeviceGuard& operator=(DeviceGuard&&) = delete;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (restore_ >= 0) (void)hipSetDevice(restore_);
  }

 private:
  explicit DeviceGuard(int restore) : restore_(restore) {}
  int restore_;  // the device to make current again; -1: nothing to restore
};

}  // namespace peerreduce::gpu
