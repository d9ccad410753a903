#include "gpu/kernel_choice.h"

#include <algorithm>
#include <string>

#include "config/settings_registry.h"
#include "gpu/device_values.h"
#include "piece_ring.h"
#include "portability.h"

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

StatusOr<GpuSettings> gpuSettingsFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  GpuSettings s;
  PR_ASSIGN_OR_RETURN(const auto blocks, readIntegerSetting(SettingId::kGpuMaxBlocks, getenv));
  if (blocks) s.max_blocks = static_cast<int>(*blocks);
  PR_ASSIGN_OR_RETURN(const auto interpreter_blocks, readIntegerSetting(SettingId::kGpuInterpreterMaxBlocks, getenv));
  if (interpreter_blocks) s.kernels.interpreter_max_blocks = static_cast<int>(*interpreter_blocks);
  PR_ASSIGN_OR_RETURN(const auto pull_blocks, readIntegerSetting(SettingId::kGpuPullMaxBlocks, getenv));
  if (pull_blocks) s.kernels.pull_max_blocks = static_cast<int>(*pull_blocks);
  PR_ASSIGN_OR_RETURN(const auto push_ranks, readIntegerSetting(SettingId::kGpuPushCollectiveMaxRanks, getenv));
  if (push_ranks) s.kernels.push_collective_max_ranks = static_cast<int>(*push_ranks);
  PR_ASSIGN_OR_RETURN(const auto fused, readBooleanSetting(SettingId::kGpuFused, getenv));
  if (fused) s.kernels.fused = *fused;
  PR_ASSIGN_OR_RETURN(const auto overlap, readBooleanSetting(SettingId::kGpuOverlap, getenv));
  if (overlap) s.kernels.overlap_launch = *overlap;
  PR_ASSIGN_OR_RETURN(const auto engines, readBooleanSetting(SettingId::kGpuCopyEngines, getenv));
  if (engines) s.kernels.copy_engines = *engines;
  PR_ASSIGN_OR_RETURN(const auto stream, readBooleanSetting(SettingId::kGpuPushStream, getenv));
  if (stream) s.kernels.push_stream = *stream;
  PR_ASSIGN_OR_RETURN(const auto push_host, readBooleanSetting(SettingId::kGpuPushHost, getenv));
  if (push_host) s.kernels.push_host = *push_host;
  const struct {
    SettingId id;
    std::uint64_t* field;
  } sizes[] = {
      {SettingId::kGpuBytesPerBlock, &s.bytes_per_block},
      {SettingId::kGpuLineBytesPerBlock, &s.line_bytes_per_block},
      {SettingId::kGpuLowLatencyMaxBytes, &s.kernels.max_bytes},
      {SettingId::kGpuLowLatencyTwoShotMaxBytes, &s.kernels.max_two_shot_bytes},
      {SettingId::kGpuPushMinBytes, &s.kernels.push_min_bytes},
      {SettingId::kGpuPushOneShotMinBytes, &s.kernels.push_one_shot_min_bytes},
      {SettingId::kGpuPushOneShotPieceBytes, &s.kernels.push_one_shot_piece_bytes},
      {SettingId::kGpuPushStreamPieceBytes, &s.kernels.push_stream_piece_bytes},
      {SettingId::kGpuPushCollectiveMinBytes, &s.kernels.push_collective_min_bytes},
      {SettingId::kGpuCollectiveLinesMaxBytes, &s.kernels.collective_max_bytes},
      {SettingId::kGpuHostLinesMaxBytes, &s.kernels.host_lines_max_bytes},
  };
  for (const auto& size : sizes) {
    PR_ASSIGN_OR_RETURN(const auto bytes, readByteSizeSetting(size.id, getenv));
    if (bytes) *size.field = *bytes;
    if (bytes && size.id == SettingId::kGpuLowLatencyMaxBytes) s.kernels.two_rank_default = false;
    if (bytes && size.id == SettingId::kGpuCollectiveLinesMaxBytes) s.kernels.collective_two_rank_default = false;
    if (bytes && size.id == SettingId::kGpuHostLinesMaxBytes) s.kernels.host_lines_two_rank_default = false;
    if (bytes && size.id == SettingId::kGpuPushOneShotMinBytes) s.kernels.push_one_shot_min_default = false;
    if (bytes && size.id == SettingId::kGpuPushCollectiveMinBytes) s.kernels.push_collective_min_default = false;
  }
  PR_ASSIGN_OR_RETURN(const auto probe_faults, readTextSetting(SettingId::kGpuFaultProbePairs, getenv));
  if (probe_faults) s.probe_fault_pairs = *probe_faults;
  return s;
}

std::uint64_t oneShotLinesMaxBytes(const KernelPolicy& policy, int world_size) {
  if (policy.max_bytes == 0) return 0;  // off stays off at every world size
  return world_size == 2 && policy.two_rank_default ? kDefaultLowLatencyTwoRankMaxBytes : policy.max_bytes;
}

std::uint64_t collectiveLinesMaxBytes(const KernelPolicy& policy, int world_size) {
  if (policy.collective_max_bytes == 0) return 0;  // off stays off at every world size
  return world_size == 2 && policy.collective_two_rank_default ? kDefaultCollectiveLinesTwoRankMaxBytes
                                                               : policy.collective_max_bytes;
}

KernelChoice chooseKernel(FusedKind kind, std::uint64_t bytes, int world_size, const KernelPolicy& policy) {
  if (!policy.fused || kind == FusedKind::kNone) return KernelChoice::kInterpreter;
  const bool lines = world_size >= 2 && bytes > 0;
  if (kind == FusedKind::kReduceScatterDirect || kind == FusedKind::kAllGatherDirect ||
      kind == FusedKind::kBroadcastDirect) {
    if (!lines || bytes > collectiveLinesMaxBytes(policy, world_size) || bytes > linePayloadBytes(world_size)) {
      // Worlds up to push_collective_max_ranks (past two ranks a broadcast relays: kernels/push_kernels.cuh).
      const int most = std::max(policy.push_collective_max_ranks, 2);
      const bool push = world_size >= 2 && world_size <= most && bytes > 0 && policy.push_collective_min_bytes != 0 &&
                        bytes >= policy.push_collective_min_bytes;
      if (!push) return KernelChoice::kInterpreter;
      if (kind == FusedKind::kReduceScatterDirect) return KernelChoice::kReduceScatterPush;
      return kind == FusedKind::kAllGatherDirect ? KernelChoice::kAllGatherPush : KernelChoice::kBroadcastPush;
    }
    if (kind == FusedKind::kReduceScatterDirect) return KernelChoice::kReduceScatterLines;
    return kind == FusedKind::kAllGatherDirect ? KernelChoice::kAllGatherLines : KernelChoice::kBroadcastLines;
  }
  if (kind == FusedKind::kOneShot) {
    const bool fits = bytes <= oneShotLinesMaxBytes(policy, world_size) && bytes <= linePayloadBytes(world_size);
    if (lines && fits) return KernelChoice::kOneShotLines;
    // Two ranks only: the pushing one-shot's one slot per peer is the one-shot plan's slot 0.
    const bool push = world_size == 2 && policy.push_one_shot_min_bytes != 0 && bytes >= policy.push_one_shot_min_bytes;
    return push ? KernelChoice::kOneShotPush : KernelChoice::kOneShotPull;
  }
  const std::uint64_t vectors = (bytes + kVectorBytes - 1) / kVectorBytes;
  if (lines && bytes <= policy.max_two_shot_bytes && bytes <= lineTwoShotPayloadBytes(world_size) &&
      vectors >= static_cast<std::uint64_t>(world_size)) {
    return KernelChoice::kTwoShotLines;
  }
  if (policy.push_min_bytes != 0 && bytes >= policy.push_min_bytes) return KernelChoice::kTwoShotPush;
  return KernelChoice::kTwoShotPull;
}

bool runsAsLines(KernelChoice choice) {
  switch (choice) {
    case KernelChoice::kOneShotLines:
    case KernelChoice::kTwoShotLines:
    case KernelChoice::kReduceScatterLines:
    case KernelChoice::kAllGatherLines:
    case KernelChoice::kBroadcastLines:
      return true;
    case KernelChoice::kInterpreter:
    case KernelChoice::kOneShotPull:
    case KernelChoice::kTwoShotPull:
    case KernelChoice::kTwoShotPush:
    case KernelChoice::kOneShotPush:
    case KernelChoice::kReduceScatterPush:
    case KernelChoice::kAllGatherPush:
    case KernelChoice::kBroadcastPush:
      return false;
  }
  return false;
}

bool streamsPieces(KernelChoice choice, const KernelPolicy& policy, std::uint64_t scratch_bytes, int blocks,
                   int world_size) {
  const bool pieced = choice == KernelChoice::kOneShotPush || choice == KernelChoice::kReduceScatterPush ||
                      choice == KernelChoice::kAllGatherPush || choice == KernelChoice::kBroadcastPush;
  if (!policy.push_stream || !pieced || blocks <= 0 || world_size < 2) return false;
  const std::uint64_t region_vectors =
      senderPartBytes(scratch_bytes, world_size) / kVectorBytes / static_cast<std::uint64_t>(blocks);
  if (world_size > 2) return region_vectors >= 2;  // the ring halves its pieces to fit
  const std::uint64_t piece_vectors = std::max<std::uint64_t>(policy.push_stream_piece_bytes / kVectorBytes, 1);
  return region_vectors >= 2 * piece_vectors;
}

bool streamsOnly(KernelChoice choice, int world_size) {
  return world_size > 2 && (choice == KernelChoice::kReduceScatterPush || choice == KernelChoice::kAllGatherPush ||
                            choice == KernelChoice::kBroadcastPush);
}

bool runsPushed(KernelChoice choice) {
  switch (choice) {
    case KernelChoice::kTwoShotPush:
    case KernelChoice::kOneShotPush:
    case KernelChoice::kReduceScatterPush:
    case KernelChoice::kAllGatherPush:
    case KernelChoice::kBroadcastPush:
      return true;
    case KernelChoice::kInterpreter:
    case KernelChoice::kOneShotPull:
    case KernelChoice::kTwoShotPull:
    case KernelChoice::kOneShotLines:
    case KernelChoice::kTwoShotLines:
    case KernelChoice::kReduceScatterLines:
    case KernelChoice::kAllGatherLines:
    case KernelChoice::kBroadcastLines:
      return false;
  }
  return false;
}

std::uint64_t maxBatchBytes(FusedKind kind, int world_size, const KernelPolicy& policy) {
  if (!policy.fused || world_size < 2) return 0;
  // Whole vectors only: every item starts on a vector of its own.
  if (kind == FusedKind::kOneShot) {
    return std::min(oneShotLinesMaxBytes(policy, world_size), linePayloadBytes(world_size)) / kVectorBytes *
           kVectorBytes;
  }
  if (kind != FusedKind::kTwoShot) return 0;
  const std::uint64_t most = std::min(policy.max_two_shot_bytes, lineTwoShotPayloadBytes(world_size));
  // A two-shot of lines needs a vector per rank; anything smaller is below every one-shot's capacity.
  return most < static_cast<std::uint64_t>(world_size) * kVectorBytes ? 0 : most / kVectorBytes * kVectorBytes;
}

int launchBlocks(KernelChoice choice, std::uint64_t bytes, int block_cap, std::uint64_t bytes_per_block,
                 std::uint64_t line_bytes_per_block, int interpreter_cap, int pull_cap) {
  const bool lines = runsAsLines(choice);
  const bool uncapped = lines || runsPushed(choice);
  const std::uint64_t per_block = std::max<std::uint64_t>(1, lines ? line_bytes_per_block : bytes_per_block);
  const int own_cap = choice == KernelChoice::kInterpreter ? interpreter_cap : pull_cap;
  const int cap = std::max(1, uncapped ? block_cap : std::min(block_cap, own_cap));
  const std::uint64_t wanted = bytes / per_block + (bytes % per_block != 0 ? 1 : 0);
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, static_cast<std::uint64_t>(cap))));
}

bool launchesMayOverlap(bool setting, int kernels_ptx_version) {
  return setting && kernels_ptx_version >= kGridDependencyPtxVersion;
}

}  // namespace peerreduce::gpu
