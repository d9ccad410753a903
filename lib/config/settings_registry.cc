#include "config/settings_registry.h"

#include <array>
#include <utility>
#include <variant>

#include "bootstrap/host_identity.h"
#include "config/gpu_settings.h"
#include "core/collective_algorithms.h"
#include "peerreduce/memory.h"
#include "util/hash.h"
#include "util/log.h"

namespace peerreduce {
namespace {

// The fingerprint hashes std::size_t fields as they were hashed before the registry existed (8 bytes);
// a platform with another size would give other fingerprints than its peers.
static_assert(sizeof(std::size_t) == sizeof(std::uint64_t));

SettingSpec integerSpec(std::string name, std::string noun, std::string unit, std::int64_t low, std::int64_t high) {
  SettingSpec s;
  s.name = std::move(name);
  s.kind = SettingKind::kInteger;
  s.noun = std::move(noun);
  s.unit = std::move(unit);
  s.min_integer = low;
  s.max_integer = high;
  return s;
}

SettingSpec byteSizeSpec(std::string name, std::string noun, std::uint64_t low, std::uint64_t high) {
  SettingSpec s;
  s.name = std::move(name);
  s.kind = SettingKind::kByteSize;
  s.noun = std::move(noun);
  s.unit = "bytes";
  s.min_bytes = low;
  s.max_bytes = high;
  return s;
}

// "1/0/true/false/on/off" (Config) or "1 or 0" (the GPU transport's switches, which never took words).
SettingSpec booleanSpec(std::string name, std::string noun, bool words) {
  SettingSpec s;
  s.name = std::move(name);
  s.kind = SettingKind::kBoolean;
  s.noun = std::move(noun);
  s.choices = {{"1", 1}, {"0", 0}};
  s.choices_text = "1 or 0";
  if (words) {
    s.choices.insert(s.choices.end(), {{"true", 1}, {"false", 0}, {"on", 1}, {"off", 0}});
    s.choices_text = "1/0/true/false/on/off";
  }
  return s;
}

SettingSpec textSpec(std::string name, SettingKind kind, std::string noun, std::size_t max_chars) {
  SettingSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.noun = std::move(noun);
  s.max_chars = max_chars;
  s.default_value = std::string();
  return s;
}

// The NCCL-compatible library's settings (nccl/nccl_settings.h reads them; docs/NCCL.md explains them).
template <typename At>
void addNcclSpecs(const At& at) {
  at(SettingId::kNcclLibrary) =
      textSpec("PEERREDUCE_NCCL_LIB", SettingKind::kPath, "NCCL library path", kMaxTuningFileChars);
  at(SettingId::kNcclLibrary).default_note = "libnccl.so.2 as the dynamic linker finds it";
  at(SettingId::kNcclLibrary).example = "/opt/nccl/lib/libnccl.so.2";
  at(SettingId::kNcclLibrary).help =
      "the real NCCL libpeerreduce_nccl.so loads (dlopen) and forwards every call it does not take to";

  SettingSpec& take = at(SettingId::kNcclTake);
  take.name = "PEERREDUCE_NCCL_TAKE";
  take.kind = SettingKind::kChoice;
  take.noun = "NCCL take mode";
  // The numbers are nccl::TakeMode's (nccl/take_policy.h), which checks them.
  take.choices = {{"auto", 0}, {"all", 1}, {"none", 2}};
  take.default_value = std::int64_t{0};
  take.example = "none";
  take.help =
      "which NCCL calls peerreduce takes: auto (where it is faster), all (every one it can run with NCCL's "
      "semantics), none (forward everything)";

  // 16 MiB: the largest allreduce peerreduce ran faster than NCCL on 2 and 4 x H200 (docs/PERF.md: 0.97 x at
  // 16 MiB, 1.14 x at 64 MiB on 4 GPUs). The take table decides below it; this caps whatever a table says.
  at(SettingId::kNcclMaxBytes) = byteSizeSpec("PEERREDUCE_NCCL_MAX_BYTES", "largest message taken", 0, UINT64_MAX);
  at(SettingId::kNcclMaxBytes).default_value = std::uint64_t{UINT64_MAX};
  at(SettingId::kNcclMaxBytes).example = "4M";
  at(SettingId::kNcclMaxBytes).help =
      "in auto mode, a cap over the take table: no collective larger than this (bytes of its whole buffer) is "
      "taken; larger ones go to NCCL (unset: no cap, the take table decides at every size)";

  // On: nccl-tests' `-o avg -c 1` allreduce and reduce-scatter through the library in fp32, bf16 and fp16
  // passed on GPUs (docs/NCCL.md, "avg"); 0 is the way back to NCCL's own if a program's checks disagree.
  at(SettingId::kNcclTakeAvg) = booleanSpec("PEERREDUCE_NCCL_TAKE_AVG", "NCCL avg switch", true);
  at(SettingId::kNcclTakeAvg).default_value = true;
  at(SettingId::kNcclTakeAvg).example = "0";
  at(SettingId::kNcclTakeAvg).help =
      "1: allreduces and reduce-scatters with ncclAvg are taken like sums (NCCL's premultiplied average for "
      "floating types, the sum divided for integers); 0: they go to NCCL";

  at(SettingId::kNcclTakeTable) =
      textSpec("PEERREDUCE_NCCL_TAKE_TABLE", SettingKind::kPath, "NCCL take table path", kMaxTuningFileChars);
  at(SettingId::kNcclTakeTable).default_note = "the built-in table";
  at(SettingId::kNcclTakeTable).example = "take.txt";
  at(SettingId::kNcclTakeTable).help =
      "a take table (docs/NCCL.md) that replaces the built-in one: per collective, GPU architecture, world "
      "size, dtype class and size, whether auto mode takes a call (bench/take_table_from_bench.py writes one)";

  at(SettingId::kNcclSummary) = booleanSpec("PEERREDUCE_NCCL_SUMMARY", "NCCL summary switch", true);
  at(SettingId::kNcclSummary).default_value = false;
  at(SettingId::kNcclSummary).example = "1";
  at(SettingId::kNcclSummary).help =
      "1: each communicator prints, when destroyed, the calls and bytes peerreduce took and forwarded, and the host "
      "time per call in the library";

  at(SettingId::kNcclSimulate) = integerSpec("PEERREDUCE_NCCL_SIMULATE", "simulated world seed", "", 0, INT64_MAX);
  at(SettingId::kNcclSimulate).default_note = "unset: on GPUs";
  at(SettingId::kNcclSimulate).example = "7";
  at(SettingId::kNcclSimulate).help =
      "tests only: peerreduce's communicators run on a simulated world seeded with this value, and the NCCL "
      "loaded must move host memory (the test double does)";

  for (SettingId id : {SettingId::kNcclTake, SettingId::kNcclMaxBytes, SettingId::kNcclTakeAvg,
                       SettingId::kNcclTakeTable, SettingId::kNcclSimulate}) {
    at(id).agreement = SettingAgreement::kComparedByReader;
  }
}

// The specs of every row but PEERREDUCE_DEBUG (the logger's, util/log.h), indexed by SettingId.
std::array<SettingSpec, kSettingCount> makeSpecs() {
  std::array<SettingSpec, kSettingCount> specs;
  const auto at = [&specs](SettingId id) -> SettingSpec& { return specs[static_cast<std::size_t>(id)]; };

  SettingSpec& algorithm = at(SettingId::kAlgorithm);
  algorithm.name = "PEERREDUCE_ALGO";
  algorithm.kind = SettingKind::kChoice;
  algorithm.noun = "algorithm";
  for (int a = 0; a < kBuiltAlgorithmCount; ++a) {
    algorithm.choices.push_back({std::string(algorithmName(static_cast<Algorithm>(a))), a});
  }
  algorithm.default_value = std::int64_t{static_cast<int>(Algorithm::kAuto)};
  algorithm.example = "ring";
  algorithm.help =
      "the algorithm of every allreduce; auto lets the cost model and the tuning table choose per size "
      "(never copy-engine-two-shot, which runs only when set here until its copy-engine costs are measured). "
      "Reduce-scatter, all-gather and broadcast run it too where they have it, unless their own setting is given";

  const auto one_collective = [&](SettingId id, const char* name, Collective collective, const char* example) {
    SettingSpec& s = at(id);
    s.name = name;
    s.kind = SettingKind::kChoice;
    s.noun = std::string(collectiveName(collective)) + " algorithm";
    s.choices.push_back({std::string(algorithmName(Algorithm::kAuto)), static_cast<int>(Algorithm::kAuto)});
    // The algorithms the collective has (core/collective_algorithms.h), in the enum's order.
    for (int a = 1; a < kBuiltAlgorithmCount; ++a) {
      if (!collectiveHasAlgorithm(collective, static_cast<Algorithm>(a))) continue;
      s.choices.push_back({std::string(algorithmName(static_cast<Algorithm>(a))), a});
    }
    s.default_value = std::int64_t{static_cast<int>(Algorithm::kAuto)};
    s.example = example;
    s.fingerprinted_when_set = true;
    s.help = "the algorithm of every " + std::string(collectiveName(collective)) +
             "; auto: PEERREDUCE_ALGO where the collective has that algorithm, else the cost model per size";
    return &s;
  };
  SettingSpec* reduce_scatter = one_collective(SettingId::kReduceScatterAlgorithm, "PEERREDUCE_ALGO_REDUCE_SCATTER",
                                               Collective::kReduceScatter, "recursive-doubling");
  // Reduce-scatter's half of the exchange family is recursive halving: both names select it.
  reduce_scatter->choices.push_back({"recursive-halving", static_cast<int>(Algorithm::kRecursiveDoubling)});
  one_collective(SettingId::kAllGatherAlgorithm, "PEERREDUCE_ALGO_ALL_GATHER", Collective::kAllGather,
                 "recursive-doubling");
  one_collective(SettingId::kBroadcastAlgorithm, "PEERREDUCE_ALGO_BROADCAST", Collective::kBroadcast, "tree");

  at(SettingId::kTimeoutMs) = integerSpec("PEERREDUCE_TIMEOUT_MS", "timeout", "ms", 1, kMaxTimeoutMs);
  at(SettingId::kTimeoutMs).default_value = std::int64_t{kDefaultTimeoutMs};
  at(SettingId::kTimeoutMs).example = "5000";
  at(SettingId::kTimeoutMs).help =
      "bound on every wait of an operation, in milliseconds (communicators of the NCCL library: 30 minutes "
      "unless set, docs/NCCL.md)";

  at(SettingId::kBootstrapTimeoutMs) =
      integerSpec("PEERREDUCE_BOOTSTRAP_TIMEOUT_MS", "bootstrap timeout", "ms", 1, kMaxTimeoutMs);
  at(SettingId::kBootstrapTimeoutMs).default_value = std::int64_t{kDefaultBootstrapTimeoutMs};
  at(SettingId::kBootstrapTimeoutMs).example = "2000";
  at(SettingId::kBootstrapTimeoutMs).help =
      "least bound on each wait for the other ranks at creation and buffer registration; the larger of this "
      "and PEERREDUCE_TIMEOUT_MS applies";

  at(SettingId::kScratchBytes) =
      byteSizeSpec("PEERREDUCE_SCRATCH_BYTES", "scratch", kMinScratchBytes, kMaxScratchBytes);
  at(SettingId::kScratchBytes).default_value = std::uint64_t{kDefaultScratchBytes};
  at(SettingId::kScratchBytes).example = "16M";
  at(SettingId::kScratchBytes).help = "scratch per rank and stream; larger messages run in segments of about half";

  at(SettingId::kVerifyPlans) = booleanSpec("PEERREDUCE_VERIFY_PLANS", "plan verification", true);
  at(SettingId::kVerifyPlans).default_value = true;
  at(SettingId::kVerifyPlans).example = "0";
  at(SettingId::kVerifyPlans).help = "run the plan verifier on every plan at creation (cached per process)";

  at(SettingId::kLinkMask) = textSpec("PEERREDUCE_LINK_MASK", SettingKind::kLinkMask, "link mask", kMaxLinkMaskChars);
  at(SettingId::kLinkMask).default_note = "none";
  at(SettingId::kLinkMask).example = "0-1,host:2-3";
  at(SettingId::kLinkMask).help =
      "pairs of ranks whose direct link is not used (A-B) or that talk through pinned host memory (host:A-B; "
      "host:all: every pair), both directions: partial connectivity and machines without peer access anywhere";

  at(SettingId::kTuningFile) =
      textSpec("PEERREDUCE_TUNING_FILE", SettingKind::kPath, "tuning file path", kMaxTuningFileChars);
  at(SettingId::kTuningFile).default_note = "the built-in table";
  at(SettingId::kTuningFile).example = "tuning.txt";
  at(SettingId::kTuningFile).help =
      "a tuning table (docs/ALGORITHMS.md) whose measured choices override the cost model";

  // A plan file for one collective and a range of sizes (docs/PLANS.md). Added after fingerprints were in
  // use: hashed only when set, so configurations without one keep their fingerprints.
  at(SettingId::kPlanFile) =
      textSpec("PEERREDUCE_PLAN_FILE", SettingKind::kPath, "plan file path", kMaxTuningFileChars);
  at(SettingId::kPlanFile).default_note = "none";
  at(SettingId::kPlanFile).example = "hierarchical.plan";
  at(SettingId::kPlanFile).help =
      "a plan file (docs/PLANS.md), verified at creation, that runs its collective for the sizes "
      "PEERREDUCE_PLAN_MIN_BYTES..PEERREDUCE_PLAN_MAX_BYTES give and where the tuning table names 'user'";
  at(SettingId::kPlanMinBytes) = byteSizeSpec("PEERREDUCE_PLAN_MIN_BYTES", "plan file's smallest size", 0, UINT64_MAX);
  at(SettingId::kPlanMinBytes).default_value = std::uint64_t{0};
  at(SettingId::kPlanMinBytes).example = "64K";
  at(SettingId::kPlanMinBytes).help =
      "smallest operation (bytes as the tuning table counts them: the whole buffer of a reduce-scatter or "
      "all-gather) the plan file runs";
  at(SettingId::kPlanMaxBytes) = byteSizeSpec("PEERREDUCE_PLAN_MAX_BYTES", "plan file's size bound", 0, UINT64_MAX);
  at(SettingId::kPlanMaxBytes).range_hint = "0 = no upper bound";
  at(SettingId::kPlanMaxBytes).default_value = std::uint64_t{0};
  at(SettingId::kPlanMaxBytes).default_note = "no upper bound";
  at(SettingId::kPlanMaxBytes).example = "16M";
  at(SettingId::kPlanMaxBytes).help =
      "operations from this size on (exclusive bound, as the minimum counts) run the built-in choice again";
  for (SettingId id : {SettingId::kPlanFile, SettingId::kPlanMinBytes, SettingId::kPlanMaxBytes}) {
    at(id).fingerprinted_when_set = true;
  }

  at(SettingId::kPoolBytes) = byteSizeSpec("PEERREDUCE_POOL_BYTES", "pool size", kMinPoolBytes, kMaxPoolBytes);
  at(SettingId::kPoolBytes).multiple_of = kIpcGranularityBytes;
  at(SettingId::kPoolBytes).multiple_why = "the CUDA/HIP IPC allocation granularity";
  at(SettingId::kPoolBytes).default_value = std::uint64_t{kDefaultPoolBytes};
  at(SettingId::kPoolBytes).example = "256M";
  at(SettingId::kPoolBytes).help = "symmetric memory per rank; holds the scratch of every channel and user blocks";

  // The quota's own range is the pool's; that it fits the pool chosen is checked by MemorySettings::validate.
  at(SettingId::kPoolQuotaBytes) = byteSizeSpec("PEERREDUCE_POOL_QUOTA_BYTES", "pool quota", 0, kMaxPoolBytes);
  at(SettingId::kPoolQuotaBytes).range_hint = "0 = no quota";
  at(SettingId::kPoolQuotaBytes).default_value = std::uint64_t{0};
  at(SettingId::kPoolQuotaBytes).default_note = "no quota";
  at(SettingId::kPoolQuotaBytes).example = "48M";
  at(SettingId::kPoolQuotaBytes).help = "most bytes the communicator may hold in its pool; at most the pool size";

  at(SettingId::kPoolAlignment) =
      byteSizeSpec("PEERREDUCE_POOL_ALIGNMENT", "pool alignment", kMinPoolAlignmentBytes, kMaxPoolAlignmentBytes);
  at(SettingId::kPoolAlignment).power_of_two = true;
  at(SettingId::kPoolAlignment).default_value = std::uint64_t{kDefaultPoolAlignmentBytes};
  at(SettingId::kPoolAlignment).example = "4K";
  at(SettingId::kPoolAlignment).help = "default alignment of pool blocks";

  SettingSpec& defrag = at(SettingId::kPoolDefragThreshold);
  defrag.name = "PEERREDUCE_POOL_DEFRAG_THRESHOLD";
  defrag.kind = SettingKind::kFraction;
  defrag.noun = "defragmentation threshold";
  defrag.range_hint = "1 = never automatically";
  defrag.default_value = kDefaultDefragThreshold;
  defrag.example = "0.25";
  defrag.help = "fragmentation at which idle scratch is compacted (again once it fell to half of it)";

  at(SettingId::kPinnedLimitBytes) = byteSizeSpec("PEERREDUCE_PINNED_LIMIT_BYTES", "pinned host memory limit",
                                                  kMinPinnedLimitBytes, kMaxPinnedLimitBytes);
  at(SettingId::kPinnedLimitBytes).default_value = std::uint64_t{kDefaultPinnedLimitBytes};
  at(SettingId::kPinnedLimitBytes).example = "1G";
  at(SettingId::kPinnedLimitBytes).help = "most pinned host memory held at once (host-staged paths)";

  at(SettingId::kGpuMaxBlocks) = integerSpec("PEERREDUCE_GPU_MAX_BLOCKS", "block limit", "", 1, gpu::kMaxKernelBlocks);
  at(SettingId::kGpuMaxBlocks).default_note = "the multiprocessor count";
  at(SettingId::kGpuMaxBlocks).example = "32";
  at(SettingId::kGpuMaxBlocks).help = "most blocks per kernel launch";

  at(SettingId::kGpuInterpreterMaxBlocks) =
      integerSpec("PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS", "interpreter block limit", "", 1, gpu::kMaxKernelBlocks);
  at(SettingId::kGpuInterpreterMaxBlocks).default_note = "the block limit";
  at(SettingId::kGpuInterpreterMaxBlocks).example = "32";
  at(SettingId::kGpuInterpreterMaxBlocks).help = "most blocks of the plan interpreter (at most the block limit)";
  at(SettingId::kGpuPullMaxBlocks) =
      integerSpec("PEERREDUCE_GPU_PULL_MAX_BLOCKS", "fused pull block limit", "", 1, gpu::kMaxKernelBlocks);
  at(SettingId::kGpuPullMaxBlocks).default_note = std::to_string(gpu::kDefaultMaxBlocks) + " (at most the block limit)";
  at(SettingId::kGpuPullMaxBlocks).example = "132";
  at(SettingId::kGpuPullMaxBlocks).help =
      "most blocks of the fused pulling one-shot and two-shot (at most the block limit)";

  at(SettingId::kGpuPushCollectiveMaxRanks) =
      integerSpec("PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS", "push collective world limit", "", 2, kMaxWorldSize);
  at(SettingId::kGpuPushCollectiveMaxRanks).default_value = std::int64_t{gpu::kDefaultPushCollectiveMaxRanks};
  at(SettingId::kGpuPushCollectiveMaxRanks).example = "4";
  at(SettingId::kGpuPushCollectiveMaxRanks).help =
      "the largest world whose direct reduce-scatters, all-gathers and broadcasts past the lines push their data "
      "into the peers' scratch (past two ranks streamed through it; a broadcast relays: the root pushes each "
      "receiver a range, the receivers pass theirs on)";

  at(SettingId::kGpuBytesPerBlock) =
      byteSizeSpec("PEERREDUCE_GPU_BYTES_PER_BLOCK", "bytes per block", gpu::kMinBytesPerBlock, UINT64_MAX);
  at(SettingId::kGpuBytesPerBlock).default_value = gpu::kDefaultBytesPerBlock;
  at(SettingId::kGpuBytesPerBlock).example = "64K";
  at(SettingId::kGpuBytesPerBlock).help = "input bytes per block of the pull and push kernels";

  at(SettingId::kGpuLineBytesPerBlock) =
      byteSizeSpec("PEERREDUCE_GPU_LL_BYTES_PER_BLOCK", "line bytes per block", gpu::kMinBytesPerBlock, UINT64_MAX);
  at(SettingId::kGpuLineBytesPerBlock).default_value = gpu::kDefaultLineBytesPerBlock;
  at(SettingId::kGpuLineBytesPerBlock).example = "4K";
  at(SettingId::kGpuLineBytesPerBlock).help = "input bytes per block of the low-latency (line) kernels";

  // The GPU transport's switches ("1 or 0"); the example is the value that is not the default.
  const auto gpu_switch = [&](SettingId id, const char* name, const char* noun, bool on, const char* help) {
    at(id) = booleanSpec(name, noun, false);
    at(id).default_value = on;
    at(id).example = on ? "0" : "1";
    at(id).help = help;
  };
  const auto on_by_default = [&](SettingId id, const char* name, const char* noun, const char* help) {
    gpu_switch(id, name, noun, true, help);
  };
  on_by_default(SettingId::kGpuFused, "PEERREDUCE_GPU_FUSED", "fused kernel switch",
                "0: the plan interpreter runs every program; 1: fused and line kernels where they fit");
  on_by_default(SettingId::kGpuOverlap, "PEERREDUCE_GPU_OVERLAP", "launch overlap switch",
                "1: programmatic dependent launch (Hopper); 0: ordinary launches");

  const auto threshold = [&](SettingId id, const char* name, const char* noun, std::uint64_t fallback,
                             const char* example, const char* help) {
    at(id) = byteSizeSpec(name, noun, 0, UINT64_MAX);
    at(id).range_hint = "0 = none";
    at(id).default_value = fallback;
    at(id).example = example;
    at(id).help = help;
  };
  threshold(SettingId::kGpuLowLatencyMaxBytes, "PEERREDUCE_GPU_LL_MAX_BYTES", "low-latency one-shot limit",
            gpu::kDefaultLowLatencyMaxBytes, "64K",
            "largest one-shot run as lines; 0: none (unset: 256 KiB, and 1 MiB at two ranks; set: at every world "
            "size)");
  threshold(SettingId::kGpuLowLatencyTwoShotMaxBytes, "PEERREDUCE_GPU_LL2_MAX_BYTES", "low-latency two-shot limit",
            gpu::kDefaultLowLatencyTwoShotMaxBytes, "0", "largest two-shot run as lines; 0: none");
  threshold(SettingId::kGpuPushMinBytes, "PEERREDUCE_GPU_PUSH_MIN_BYTES", "push two-shot threshold",
            gpu::kDefaultPushMinBytes, "4M", "smallest two-shot that pushes its data; 0: none");
  threshold(SettingId::kGpuPushOneShotMinBytes, "PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES", "push one-shot threshold",
            gpu::kDefaultPushOneShotMinBytes, "4M",
            "smallest one-shot past the lines that pushes its input into the peer's scratch, two ranks only; 0: "
            "none");
  threshold(SettingId::kGpuPushOneShotPieceBytes, "PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES",
            "push one-shot piece size", gpu::kDefaultPushOneShotPieceBytes, "64K",
            "bytes a block of the two-rank pushing one-shot pushes before folding the piece it pushed before "
            "(whole pieces, at most 16 a block); 0: one piece, everything pushed before anything is folded");
  threshold(SettingId::kGpuPushCollectiveMinBytes, "PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES",
            "push collective threshold", gpu::kDefaultPushCollectiveMinBytes, "4M",
            "smallest block (count x element size) of a direct reduce-scatter, all-gather or broadcast past the "
            "lines that pushes its data into the peer's scratch, two ranks only; 0: none");
  threshold(SettingId::kGpuCollectiveLinesMaxBytes, "PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES",
            "low-latency collective limit", gpu::kDefaultCollectiveLinesMaxBytes, "64K",
            "largest block (count x element size) of a direct reduce-scatter, all-gather or broadcast run as "
            "lines; 0: none (unset: 512 KiB, and 1 MiB at two ranks; set: at every world size)");
  threshold(SettingId::kGpuHostLinesMaxBytes, "PEERREDUCE_GPU_LL_HOST_MAX_BYTES", "host-staged low-latency limit",
            gpu::kDefaultHostLinesMaxBytes, "16K",
            "where some rank's memory is pinned host memory (host-staged links): the largest one-shot, two-shot or "
            "collective block run as lines, within the limits above; 0: none (unset: 64 KiB, and 512 KiB at two "
            "ranks; set: at every world size)");

  // Experimental GPU paths: off by default, "1" turns them on.
  const auto experimental = [&](SettingId id, const char* name, const char* noun, const char* help) {
    gpu_switch(id, name, noun, false, help);
  };
  experimental(SettingId::kGpuCopyEngines, "PEERREDUCE_GPU_COPY_ENGINES", "copy-engine switch",
               "1: a plan's copy-engine copies run on the copy engines (experimental); 0 (default): the plan "
               "interpreter moves them with the multiprocessors");
  on_by_default(SettingId::kGpuPushStream, "PEERREDUCE_GPU_PUSH_STREAM", "push streaming switch",
                "1 (default): a two-rank pushing one-shot, reduce-scatter, all-gather or broadcast larger than the "
                "scratch runs as one launch that cycles its pieces through the scratch; 0: one launch per segment "
                "of the scratch's size");
  on_by_default(SettingId::kGpuPushHost, "PEERREDUCE_GPU_PUSH_HOST", "host-staged push switch",
                "1 (default): where some rank's memory is pinned host memory, the two-rank pushing one-shot from 16 "
                "MiB and the pushing collectives from 32 MiB blocks (or from the push thresholds, when given), each "
                "sender's stores crossing its PCIe link while the receiver's loads cross its own; 0: the pulling "
                "kernels past the lines");
  threshold(SettingId::kGpuPushStreamPieceBytes, "PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES", "push stream piece size",
            gpu::kDefaultPushStreamPieceBytes, "32K",
            "bytes of each piece a block of a streamed pushing kernel cycles through its region of the scratch "
            "(whole vectors, at most half the region); 0: half the region");

  // Fault injection for tests of the fallback to host-staged links (lib/gpu/probe_fault.h).
  at(SettingId::kGpuFaultProbePairs) =
      textSpec("PEERREDUCE_GPU_FAULT_PROBE_PAIRS", SettingKind::kText, "probe fault pairs", kMaxLinkMaskChars);
  at(SettingId::kGpuFaultProbePairs).default_note = "none";
  at(SettingId::kGpuFaultProbePairs).example = "0-1";
  at(SettingId::kGpuFaultProbePairs).help =
      "testing: the access probe of these pairs' device mappings fails ('all' or A-B,...), so they fall back to "
      "host-staged links";

  at(SettingId::kDevice) = integerSpec("PEERREDUCE_DEVICE", "device", "", kDeviceOfLocalRank, kMaxDeviceOrdinal);
  at(SettingId::kDevice).default_value = std::int64_t{kDeviceCurrent};
  at(SettingId::kDevice).example = "3";
  at(SettingId::kDevice).help =
      "the GPU of a communicator created through the C API or the Python package: -1 the device current on the "
      "creating thread (NCCL's rule), -2 the rank's position among its machine's ranks modulo the visible devices "
      "(for programs that never choose one), N device N";
  at(SettingId::kDevice).agreement = SettingAgreement::kLocal;  // every rank drives its own

  // Added after fingerprints were in use: hashed only when set (to 0), so configurations that leave it on
  // keep their fingerprints. Ranks must agree: the log's creation is a collective step.
  at(SettingId::kCheckOperations) = booleanSpec("PEERREDUCE_CHECK_OPERATIONS", "cross-rank operation check", true);
  at(SettingId::kCheckOperations).default_value = true;
  at(SettingId::kCheckOperations).example = "0";
  at(SettingId::kCheckOperations).help =
      "compare every operation (collective, count, type, op, root) with the other ranks' of this machine through "
      "shared host memory, so ranks that disagree get kMismatch instead of a hang or a wrong result "
      "(transports that compare them themselves, as the simulator, skip it)";
  at(SettingId::kCheckOperations).agreement = SettingAgreement::kFingerprint;
  at(SettingId::kCheckOperations).fingerprinted_when_set = true;

  for (SettingId id :
       {SettingId::kAlgorithm, SettingId::kReduceScatterAlgorithm, SettingId::kAllGatherAlgorithm,
        SettingId::kBroadcastAlgorithm, SettingId::kTimeoutMs, SettingId::kScratchBytes, SettingId::kVerifyPlans,
        SettingId::kLinkMask, SettingId::kTuningFile, SettingId::kPlanFile, SettingId::kPlanMinBytes,
        SettingId::kPlanMaxBytes, SettingId::kPoolBytes, SettingId::kPoolQuotaBytes, SettingId::kPoolAlignment,
        SettingId::kPoolDefragThreshold, SettingId::kPinnedLimitBytes}) {
    at(id).agreement = SettingAgreement::kFingerprint;
  }
  for (SettingId id :
       {SettingId::kGpuMaxBlocks, SettingId::kGpuInterpreterMaxBlocks, SettingId::kGpuPullMaxBlocks,
        SettingId::kGpuBytesPerBlock, SettingId::kGpuLineBytesPerBlock, SettingId::kGpuFused,
        SettingId::kGpuLowLatencyMaxBytes, SettingId::kGpuLowLatencyTwoShotMaxBytes, SettingId::kGpuPushMinBytes,
        SettingId::kGpuPushOneShotMinBytes, SettingId::kGpuPushOneShotPieceBytes, SettingId::kGpuPushCollectiveMinBytes,
        SettingId::kGpuCollectiveLinesMaxBytes, SettingId::kGpuHostLinesMaxBytes, SettingId::kGpuCopyEngines,
        SettingId::kGpuPushStream, SettingId::kGpuPushStreamPieceBytes, SettingId::kGpuPushCollectiveMaxRanks,
        SettingId::kGpuPushHost}) {
    at(id).agreement = SettingAgreement::kSameUnchecked;
  }
  // Only how kernels are launched changes, never the protocol: ranks need not agree.
  at(SettingId::kGpuOverlap).agreement = SettingAgreement::kLocal;
  // A rank's failed probe is agreed on at creation whoever saw it: ranks need not agree.
  at(SettingId::kGpuFaultProbePairs).agreement = SettingAgreement::kLocal;
  addNcclSpecs(at);
  return specs;
}

const SettingSpec& spec(SettingId id) {
  static const std::array<SettingSpec, kSettingCount> specs = makeSpecs();
  if (id == SettingId::kDebug) return logLevelSetting();
  if (id == SettingId::kNode) return hostIdentitySetting();
  return specs[static_cast<std::size_t>(id)];
}

// Field accessors of the Config-bound rows. Values reach `set` only after parseSettingText or a kind
// check, so each holds the alternative its row's kind stores.
std::int64_t integerOf(const SettingValue& v) { return std::get<std::int64_t>(v); }
std::uint64_t bytesOf(const SettingValue& v) { return std::get<std::uint64_t>(v); }

SettingRow configRow(SettingId id, SettingOwner owner, SettingValue (*get)(const Config&),
                     void (*set)(Config&, const SettingValue&)) {
  return SettingRow{id, &spec(id), owner, get, set};
}

std::array<SettingRow, kSettingCount> makeRows() {
  using O = SettingOwner;
  using V = SettingValue;
  return {
      configRow(
          SettingId::kAlgorithm, O::kConfig,
          [](const Config& c) -> V { return std::int64_t{static_cast<int>(c.algorithm)}; },
          [](Config& c, const V& v) { c.algorithm = static_cast<Algorithm>(integerOf(v)); }),
      configRow(
          SettingId::kReduceScatterAlgorithm, O::kConfig,
          [](const Config& c) -> V { return std::int64_t{static_cast<int>(c.reduce_scatter_algorithm)}; },
          [](Config& c, const V& v) { c.reduce_scatter_algorithm = static_cast<Algorithm>(integerOf(v)); }),
      configRow(
          SettingId::kAllGatherAlgorithm, O::kConfig,
          [](const Config& c) -> V { return std::int64_t{static_cast<int>(c.all_gather_algorithm)}; },
          [](Config& c, const V& v) { c.all_gather_algorithm = static_cast<Algorithm>(integerOf(v)); }),
      configRow(
          SettingId::kBroadcastAlgorithm, O::kConfig,
          [](const Config& c) -> V { return std::int64_t{static_cast<int>(c.broadcast_algorithm)}; },
          [](Config& c, const V& v) { c.broadcast_algorithm = static_cast<Algorithm>(integerOf(v)); }),
      configRow(
          SettingId::kTimeoutMs, O::kConfig, [](const Config& c) -> V { return std::int64_t{c.timeout.count()}; },
          [](Config& c, const V& v) { c.timeout = std::chrono::milliseconds(integerOf(v)); }),
      configRow(
          SettingId::kBootstrapTimeoutMs, O::kConfig,
          [](const Config& c) -> V { return std::int64_t{c.bootstrap_timeout.count()}; },
          [](Config& c, const V& v) { c.bootstrap_timeout = std::chrono::milliseconds(integerOf(v)); }),
      configRow(
          SettingId::kScratchBytes, O::kConfig, [](const Config& c) -> V { return std::uint64_t{c.scratch_bytes}; },
          [](Config& c, const V& v) { c.scratch_bytes = bytesOf(v); }),
      configRow(
          SettingId::kVerifyPlans, O::kConfig, [](const Config& c) -> V { return c.verify_plans; },
          [](Config& c, const V& v) { c.verify_plans = std::get<bool>(v); }),
      configRow(
          SettingId::kLinkMask, O::kConfig, [](const Config& c) -> V { return c.link_mask; },
          [](Config& c, const V& v) { c.link_mask = std::get<std::string>(v); }),
      configRow(
          SettingId::kTuningFile, O::kConfig, [](const Config& c) -> V { return c.tuning_file; },
          [](Config& c, const V& v) { c.tuning_file = std::get<std::string>(v); }),
      configRow(
          SettingId::kPlanFile, O::kConfig, [](const Config& c) -> V { return c.plan_file; },
          [](Config& c, const V& v) { c.plan_file = std::get<std::string>(v); }),
      configRow(
          SettingId::kPlanMinBytes, O::kConfig, [](const Config& c) -> V { return std::uint64_t{c.plan_min_bytes}; },
          [](Config& c, const V& v) { c.plan_min_bytes = bytesOf(v); }),
      configRow(
          SettingId::kPlanMaxBytes, O::kConfig, [](const Config& c) -> V { return std::uint64_t{c.plan_max_bytes}; },
          [](Config& c, const V& v) { c.plan_max_bytes = bytesOf(v); }),
      configRow(
          SettingId::kPoolBytes, O::kMemory, [](const Config& c) -> V { return std::uint64_t{c.memory.pool_bytes}; },
          [](Config& c, const V& v) { c.memory.pool_bytes = bytesOf(v); }),
      configRow(
          SettingId::kPoolQuotaBytes, O::kMemory,
          [](const Config& c) -> V { return std::uint64_t{c.memory.pool_quota_bytes}; },
          [](Config& c, const V& v) { c.memory.pool_quota_bytes = bytesOf(v); }),
      configRow(
          SettingId::kPoolAlignment, O::kMemory,
          [](const Config& c) -> V { return std::uint64_t{c.memory.pool_alignment_bytes}; },
          [](Config& c, const V& v) { c.memory.pool_alignment_bytes = bytesOf(v); }),
      configRow(
          SettingId::kPoolDefragThreshold, O::kMemory, [](const Config& c) -> V { return c.memory.defrag_threshold; },
          [](Config& c, const V& v) { c.memory.defrag_threshold = std::get<double>(v); }),
      configRow(
          SettingId::kPinnedLimitBytes, O::kMemory,
          [](const Config& c) -> V { return std::uint64_t{c.memory.pinned_limit_bytes}; },
          [](Config& c, const V& v) { c.memory.pinned_limit_bytes = bytesOf(v); }),
      SettingRow{SettingId::kGpuMaxBlocks, &spec(SettingId::kGpuMaxBlocks), O::kGpuTransport},
      SettingRow{SettingId::kGpuInterpreterMaxBlocks, &spec(SettingId::kGpuInterpreterMaxBlocks), O::kGpuTransport},
      SettingRow{SettingId::kGpuPullMaxBlocks, &spec(SettingId::kGpuPullMaxBlocks), O::kGpuTransport},
      SettingRow{SettingId::kGpuBytesPerBlock, &spec(SettingId::kGpuBytesPerBlock), O::kGpuTransport},
      SettingRow{SettingId::kGpuLineBytesPerBlock, &spec(SettingId::kGpuLineBytesPerBlock), O::kGpuTransport},
      SettingRow{SettingId::kGpuFused, &spec(SettingId::kGpuFused), O::kGpuTransport},
      SettingRow{SettingId::kGpuOverlap, &spec(SettingId::kGpuOverlap), O::kGpuTransport},
      SettingRow{SettingId::kGpuLowLatencyMaxBytes, &spec(SettingId::kGpuLowLatencyMaxBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuLowLatencyTwoShotMaxBytes, &spec(SettingId::kGpuLowLatencyTwoShotMaxBytes),
                 O::kGpuTransport},
      SettingRow{SettingId::kGpuPushMinBytes, &spec(SettingId::kGpuPushMinBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushOneShotMinBytes, &spec(SettingId::kGpuPushOneShotMinBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushOneShotPieceBytes, &spec(SettingId::kGpuPushOneShotPieceBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushCollectiveMinBytes, &spec(SettingId::kGpuPushCollectiveMinBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuCollectiveLinesMaxBytes, &spec(SettingId::kGpuCollectiveLinesMaxBytes),
                 O::kGpuTransport},
      SettingRow{SettingId::kGpuHostLinesMaxBytes, &spec(SettingId::kGpuHostLinesMaxBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuCopyEngines, &spec(SettingId::kGpuCopyEngines), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushStream, &spec(SettingId::kGpuPushStream), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushStreamPieceBytes, &spec(SettingId::kGpuPushStreamPieceBytes), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushCollectiveMaxRanks, &spec(SettingId::kGpuPushCollectiveMaxRanks), O::kGpuTransport},
      SettingRow{SettingId::kGpuPushHost, &spec(SettingId::kGpuPushHost), O::kGpuTransport},
      SettingRow{SettingId::kGpuFaultProbePairs, &spec(SettingId::kGpuFaultProbePairs), O::kGpuTransport},
      SettingRow{SettingId::kDebug, &spec(SettingId::kDebug), O::kLogger},
      SettingRow{SettingId::kNode, &spec(SettingId::kNode), O::kBootstrap},
      SettingRow{SettingId::kNcclLibrary, &spec(SettingId::kNcclLibrary), O::kNccl},
      SettingRow{SettingId::kNcclTake, &spec(SettingId::kNcclTake), O::kNccl},
      SettingRow{SettingId::kNcclMaxBytes, &spec(SettingId::kNcclMaxBytes), O::kNccl},
      SettingRow{SettingId::kNcclTakeAvg, &spec(SettingId::kNcclTakeAvg), O::kNccl},
      SettingRow{SettingId::kNcclTakeTable, &spec(SettingId::kNcclTakeTable), O::kNccl},
      SettingRow{SettingId::kNcclSummary, &spec(SettingId::kNcclSummary), O::kNccl},
      SettingRow{SettingId::kNcclSimulate, &spec(SettingId::kNcclSimulate), O::kNccl},
      configRow(
          SettingId::kDevice, O::kConfig, [](const Config& c) -> V { return std::int64_t{c.device}; },
          [](Config& c, const V& v) { c.device = static_cast<int>(integerOf(v)); }),
      configRow(
          SettingId::kCheckOperations, O::kConfig, [](const Config& c) -> V { return c.check_operations; },
          [](Config& c, const V& v) { c.check_operations = std::get<bool>(v); }),
  };
}

const std::array<SettingRow, kSettingCount>& rows() {
  static const std::array<SettingRow, kSettingCount> table = makeRows();
  return table;
}

std::string configSettingNames() {
  std::string names;
  for (const SettingRow& row : rows()) {
    if (row.boundToConfig()) names += (names.empty() ? "" : ", ") + row.spec->name;
  }
  return names;
}

// The row of `name` if it is a field of Config; otherwise an error saying why not.
StatusOr<const SettingRow*> configRowNamed(std::string_view name) {
  const SettingRow* row = findSettingRow(name);
  if (row == nullptr) {
    return invalidArgumentError("unknown setting '" + std::string(name.substr(0, 64)) + "'; the settings are " +
                                configSettingNames() + " (docs/SETTINGS.md)");
  }
  if (!row->boundToConfig()) {
    return invalidArgumentError(row->spec->name + " is read by the " + settingOwnerName(row->owner) +
                                " from the environment, not held in the configuration; set the variable instead");
  }
  return row;
}

// The value of row `id` from the environment, of the kind the caller expects.
StatusOr<std::optional<SettingValue>> readOwnRow(SettingId id, SettingKind kind, const Getenv& getenv) {
  const SettingSpec& s = spec(id);
  if (s.kind != kind) {
    return internalError(s.name + " is a " + settingKindName(s.kind) + " setting, read as a " + settingKindName(kind));
  }
  return readSetting(s, getenv);
}

// readOwnRow's value as the type the kind stores (setting_spec.h's SettingValue).
template <typename T>
StatusOr<std::optional<T>> readOwnRowAs(SettingId id, SettingKind kind, const Getenv& getenv) {
  PR_ASSIGN_OR_RETURN(auto value, readOwnRow(id, kind, getenv));
  if (!value) return std::optional<T>();
  return std::optional<T>(std::get<T>(*value));
}

}  // namespace

const char* settingOwnerName(SettingOwner owner) {
  switch (owner) {
    case SettingOwner::kConfig:
      return "Config";
    case SettingOwner::kMemory:
      return "Config::memory";
    case SettingOwner::kGpuTransport:
      return "GPU transport";
    case SettingOwner::kLogger:
      return "logger";
    case SettingOwner::kBootstrap:
      return "bootstrap";
    case SettingOwner::kNccl:
      return "NCCL library";
  }
  return "unknown";
}

std::span<const SettingRow> settingRows() { return rows(); }

const SettingRow& settingRow(SettingId id) { return rows()[static_cast<std::size_t>(id)]; }

const SettingRow* findSettingRow(std::string_view name) {
  for (const SettingRow& row : rows()) {
    if (row.spec->name == name) return &row;
  }
  return nullptr;
}

Status applyEnvironment(Config& config, SettingOwner owner, const Getenv& getenv) {
  for (const SettingRow& row : rows()) {
    if (row.owner != owner || !row.boundToConfig()) continue;
    PR_ASSIGN_OR_RETURN(std::optional<SettingValue> value, readSetting(*row.spec, getenv));
    if (value) row.set(config, *value);
  }
  return Status::ok();
}

Status checkOwnedSettings(const Config& config, SettingOwner owner) {
  for (const SettingRow& row : rows()) {
    if (row.owner == owner && row.boundToConfig()) PR_RETURN_IF_ERROR(checkSettingValue(*row.spec, row.get(config)));
  }
  return Status::ok();
}

std::uint64_t settingsFingerprint(const Config& config) {
  Fnv1a hash;
  for (const SettingRow& row : rows()) {
    if (row.spec->agreement != SettingAgreement::kFingerprint) continue;
    const SettingValue value = row.get(config);
    if (row.spec->fingerprinted_when_set) {
      // Hashed only away from its default, under its name: configurations that leave it alone keep the
      // fingerprints of builds before the setting existed.
      if (row.spec->default_value && value == *row.spec->default_value) continue;
      hash.addString(row.spec->name);
    }
    // Each kind hashes the bytes of the field's own type, so the fingerprint stays what ranks of
    // earlier builds computed for the same settings.
    switch (row.spec->kind) {
      case SettingKind::kChoice:
        hash.add(static_cast<int>(std::get<std::int64_t>(value)));
        break;
      case SettingKind::kInteger:
        hash.add(std::get<std::int64_t>(value));
        break;
      case SettingKind::kByteSize:
        hash.add(static_cast<std::size_t>(std::get<std::uint64_t>(value)));
        break;
      case SettingKind::kBoolean:
        hash.add(std::get<bool>(value));
        break;
      case SettingKind::kFraction:
        hash.add(std::get<double>(value));
        break;
      case SettingKind::kPath:
      case SettingKind::kText:
      case SettingKind::kLinkMask:
        hash.addString(std::get<std::string>(value));
        break;
    }
  }
  return hash.value();
}

Status setConfigSetting(Config& config, std::string_view name, std::string_view text) {
  PR_ASSIGN_OR_RETURN(const SettingRow* row, configRowNamed(name));
  PR_ASSIGN_OR_RETURN(SettingValue value, parseSettingText(*row->spec, text));
  row->set(config, value);
  return Status::ok();
}

StatusOr<std::string> getConfigSetting(const Config& config, std::string_view name) {
  PR_ASSIGN_OR_RETURN(const SettingRow* row, configRowNamed(name));
  return formatSettingValue(*row->spec, row->get(config));
}

StatusOr<std::optional<std::int64_t>> readIntegerSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<std::int64_t>(id, SettingKind::kInteger, getenv);
}

StatusOr<std::optional<std::uint64_t>> readByteSizeSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<std::uint64_t>(id, SettingKind::kByteSize, getenv);
}

StatusOr<std::optional<bool>> readBooleanSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<bool>(id, SettingKind::kBoolean, getenv);
}

StatusOr<std::optional<std::int64_t>> readChoiceSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<std::int64_t>(id, SettingKind::kChoice, getenv);
}

StatusOr<std::optional<std::string>> readPathSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<std::string>(id, SettingKind::kPath, getenv);
}

StatusOr<std::optional<std::string>> readTextSetting(SettingId id, const Getenv& getenv) {
  return readOwnRowAs<std::string>(id, SettingKind::kText, getenv);
}

}  // namespace peerreduce
