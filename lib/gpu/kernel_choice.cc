#include "gpu/kernel_choice.h"

#include <algorithm>
#include <string>

#include "peerreduce/config.h"
#include "portability.h"
#include "util/parse.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kParities = 2;
constexpr std::uint64_t kVectorBytes = 16;
constexpr std::uint64_t kLineBytesPerVector = 32;  // 16 input bytes travel as two 16-byte lines
constexpr std::uint64_t kCapacityGranule = 2 * kLineBytesPerVector;

}  // namespace

std::uint64_t lineCapacityBytes(int world_size) {
  const auto writers = static_cast<std::uint64_t>(std::max(world_size, 1));
  return kLineAreaBudgetBytes / (kParities * writers) / kCapacityGranule * kCapacityGranule;
}

std::uint64_t lineAreaBytes(int world_size) {
  return kParities * static_cast<std::uint64_t>(std::max(world_size, 1)) * lineCapacityBytes(world_size);
}

std::uint64_t linePayloadBytes(int world_size) { return lineCapacityBytes(world_size) / 2; }

std::uint64_t lineTwoShotPayloadBytes(int world_size) {
  // Each owner's range, ceil(vectors / n) vectors, must fit half the capacity as lines.
  const std::uint64_t range_vectors = lineCapacityBytes(world_size) / 2 / kLineBytesPerVector;
  return static_cast<std::uint64_t>(std::max(world_size, 1)) * range_vectors * kVectorBytes;
}

namespace {

constexpr std::uint64_t kMinBytesPerBlock = 1024;

// A byte size from `name` into `value` (unset or empty: unchanged), at least `least`.
Status byteSetting(const std::function<const char*(const char*)>& getenv, const char* name, std::uint64_t least,
                   std::uint64_t& value) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return Status::ok();
  auto parsed = parseByteSize(text);
  if (!parsed.isOk()) return parsed.status().withContext(name);
  if (*parsed < least) {
    return invalidArgumentError(std::string(name) + "=" + text + " is below its least value of " +
                                std::to_string(least) + " bytes");
  }
  value = *parsed;
  return Status::ok();
}

}  // namespace

StatusOr<GpuSettings> gpuSettingsFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  GpuSettings s;
  if (const char* v = getenv("PEERREDUCE_GPU_MAX_BLOCKS"); v != nullptr && *v != '\0') {
    PR_ASSIGN_OR_RETURN(const std::int64_t blocks, parseInt64(v, 1, kMaxKernelBlocks, "PEERREDUCE_GPU_MAX_BLOCKS"));
    s.max_blocks = static_cast<int>(blocks);
  }
  if (const char* v = getenv("PEERREDUCE_GPU_FUSED"); v != nullptr && *v != '\0') {
    PR_ASSIGN_OR_RETURN(const std::int64_t fused, parseInt64(v, 0, 1, "PEERREDUCE_GPU_FUSED"));
    s.kernels.fused = fused == 1;
  }
  if (const char* v = getenv("PEERREDUCE_GPU_OVERLAP"); v != nullptr && *v != '\0') {
    PR_ASSIGN_OR_RETURN(const std::int64_t overlap, parseInt64(v, 0, 1, "PEERREDUCE_GPU_OVERLAP"));
    s.kernels.overlap_launch = overlap == 1;
  }
  PR_RETURN_IF_ERROR(byteSetting(getenv, "PEERREDUCE_GPU_BYTES_PER_BLOCK", kMinBytesPerBlock, s.bytes_per_block));
  PR_RETURN_IF_ERROR(
      byteSetting(getenv, "PEERREDUCE_GPU_LL_BYTES_PER_BLOCK", kMinBytesPerBlock, s.line_bytes_per_block));
  PR_RETURN_IF_ERROR(byteSetting(getenv, "PEERREDUCE_GPU_LL_MAX_BYTES", 0, s.kernels.max_bytes));
  PR_RETURN_IF_ERROR(byteSetting(getenv, "PEERREDUCE_GPU_LL2_MAX_BYTES", 0, s.kernels.max_two_shot_bytes));
  PR_RETURN_IF_ERROR(byteSetting(getenv, "PEERREDUCE_GPU_PUSH_MIN_BYTES", 0, s.kernels.push_min_bytes));
  return s;
}

KernelChoice chooseKernel(FusedKind kind, std::uint64_t bytes, int world_size, const KernelPolicy& policy) {
  if (!policy.fused || kind == FusedKind::kNone) return KernelChoice::kInterpreter;
  const bool lines = world_size >= 2 && bytes > 0;
  if (kind == FusedKind::kOneShot) {
    return lines && bytes <= policy.max_bytes && bytes <= linePayloadBytes(world_size) ? KernelChoice::kOneShotLines
                                                                                       : KernelChoice::kOneShotPull;
  }
  const std::uint64_t vectors = (bytes + kVectorBytes - 1) / kVectorBytes;
  if (lines && bytes <= policy.max_two_shot_bytes && bytes <= lineTwoShotPayloadBytes(world_size) &&
      vectors >= static_cast<std::uint64_t>(world_size)) {
    return KernelChoice::kTwoShotLines;
  }
  if (policy.push_min_bytes != 0 && bytes >= policy.push_min_bytes) return KernelChoice::kTwoShotPush;
  return KernelChoice::kTwoShotPull;
}

std::uint64_t maxBatchBytes(FusedKind kind, int world_size, const KernelPolicy& policy) {
  if (!policy.fused || world_size < 2) return 0;
  // Whole vectors only: every item starts on a vector of its own.
  if (kind == FusedKind::kOneShot) {
    return std::min(policy.max_bytes, linePayloadBytes(world_size)) / kVectorBytes * kVectorBytes;
  }
  if (kind != FusedKind::kTwoShot) return 0;
  const std::uint64_t most = std::min(policy.max_two_shot_bytes, lineTwoShotPayloadBytes(world_size));
  // A two-shot of lines needs a vector per rank; anything smaller is below every one-shot's capacity.
  return most < static_cast<std::uint64_t>(world_size) * kVectorBytes ? 0 : most / kVectorBytes * kVectorBytes;
}

bool launchesMayOverlap(bool setting, int kernels_ptx_version) {
  return setting && kernels_ptx_version >= kGridDependencyPtxVersion;
}

}  // namespace peerreduce::gpu
