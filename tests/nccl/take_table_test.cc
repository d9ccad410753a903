// The take table (nccl/take_table.h): its parser's typed errors with line numbers, lookups by collective,
// architecture, world size, dtype class and size, the built-in measurements, the decision's defaults where
// nothing was measured, PEERREDUCE_NCCL_TAKE_TABLE replacing the built-in table, and the cap.
#include "nccl/take_table.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "nccl/builtin_take_table.h"
#include "nccl/nccl_settings.h"
#include "nccl/nccl_values.h"
#include "nccl/take_policy.h"
#include "text_contains.h"

namespace peerreduce::nccl {
namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * 1024;
constexpr int kTakeTableFloat32 = static_cast<int>(NcclDataType::kFloat32);
constexpr int kBfloat16 = static_cast<int>(NcclDataType::kBfloat16);
constexpr int kFloat16 = static_cast<int>(NcclDataType::kFloat16);
constexpr int kUint8 = static_cast<int>(NcclDataType::kUint8);
constexpr int kTakeTableSum = static_cast<int>(NcclRedOp::kSum);

using peerreduce::testing::contains;

// The parse error of `text`: kInvalidArgument, its message.
std::string parseError(const std::string& text) {
  auto table = TakeTable::parse(text);
  EXPECT_FALSE(table.isOk()) << text;
  if (table.isOk()) return "";
  EXPECT_EQ(table.status().code(), ErrorCode::kInvalidArgument);
  return table.status().message();
}

TEST(Core, TakeTableParseErrorsNameTheLine) {
  const std::string header = "peerreduce-nccl-take 1\n";
  struct Case {
    std::string text;
    std::string expected;  // part of the message
  };
  const Case cases[] = {
      {"", "take table is empty"},
      {"# only a comment\n", "take table is empty"},
      {"peerreduce-tuning 1\n", "line 1: the first line must be 'peerreduce-nccl-take 1'"},
      {"\n\npeerreduce-nccl-take 2\n", "line 3: the first line"},
      {header + "row allreduce sm_90 4 fp32 0 1M peerreduce\n", "line 2: expected 'entry COLLECTIVE"},
      {header + "entry allreduce sm_90 4 fp32 0 1M\n", "line 2: expected 'entry COLLECTIVE"},
      {header + "\nentry alltoall sm_90 4 fp32 0 1M peerreduce\n", "line 3: unknown collective 'alltoall'"},
      {header + "entry allreduce sm/90 4 fp32 0 1M peerreduce\n", "line 2: arch must be"},
      {header + "entry allreduce sm_90 0 fp32 0 1M peerreduce\n", "line 2: world size"},
      {header + "entry allreduce sm_90 65 fp32 0 1M peerreduce\n", "line 2: world size"},
      {header + "entry allreduce sm_90 4 fp4 0 1M peerreduce\n", "line 2: unknown dtype class 'fp4'"},
      {header + "entry allreduce sm_90 4 fp32 -1 1M peerreduce\n", "line 2: min bytes"},
      {header + "entry allreduce sm_90 4 fp32 0 1T peerreduce\n", "line 2: max bytes: byte size '1T' has unknown"},
      {header + "entry allreduce sm_90 4 fp32 0 9223372036854775808 peerreduce\n",
       "line 2: max bytes 9223372036854775808 is above the largest size"},
      {header + "entry allreduce sm_90 4 fp32 2M 1M peerreduce\n", "line 2: max bytes must not be below min bytes"},
      {header + "entry allreduce sm_90 4 fp32 0 1M maybe\n", "line 2: unknown choice 'maybe'"},
      {header + "entry allreduce sm_90 4 fp32 0 1M peerreduce\nentry allreduce sm_90 4 fp32 1M 2M nccl\n",
       "allreduce entries for sm_90 with 4 ranks and dtype class fp32 overlap at [1048576, 1048576]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = parseError(c.text);
    EXPECT_TRUE(contains(message, c.expected)) << message;
  }
  // Rows of different groups may cover the same sizes; one byte past a row is free.
  EXPECT_TRUE(TakeTable::parse(header + "entry allreduce sm_90 4 fp32 0 1M peerreduce\n"
                                        "entry allreduce sm_90 4 fp32 1048577 2M nccl\n"
                                        "entry allreduce sm_90 4 any 0 1M nccl\n"
                                        "entry allreduce sm_90 2 fp32 0 1M nccl\n"
                                        "entry broadcast sm_90 4 fp32 0 1M nccl\n"
                                        "entry allreduce gfx90a 4 fp32 0 1M nccl  # a comment\n")
                  .isOk());
}

TEST(Core, TakeTableIsBounded) {
  std::string text = "peerreduce-nccl-take 1\n";
  for (std::size_t i = 0; i <= kMaxTakeTableEntries; ++i) {
    text += "entry allreduce sm_90 4 fp32 " + std::to_string(i * 2) + " " + std::to_string(i * 2) + " nccl\n";
  }
  EXPECT_TRUE(contains(parseError(text), "line " + std::to_string(kMaxTakeTableEntries + 2) + ": more than " +
                                             std::to_string(kMaxTakeTableEntries)));
  EXPECT_TRUE(contains(parseError(std::string(kMaxTakeTableBytes + 1, '#')), "exceeds the limit"));
}

TEST(Core, TakeTableLookups) {
  auto table = TakeTable::parse(
      "peerreduce-nccl-take 1\n"
      "entry allreduce sm_90 4 fp32 0 16M peerreduce\n"
      "entry allreduce sm_90 4 fp32 16777217 256M nccl\n"
      "entry allreduce sm_90 4 any 0 64K peerreduce\n"
      "entry broadcast sm_90 4 int8 4K 8K peerreduce\n");
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  const auto at = [&](Collective c, DtypeClass d, std::uint64_t bytes, int world = 4) {
    return table->lookup(c, "sm_90", world, d, bytes);
  };
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 0), TableAnswer::kPeerreduce);
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 16 * MiB), TableAnswer::kPeerreduce) << "both ends included";
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 16 * MiB + 1), TableAnswer::kNccl);
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 256 * MiB), TableAnswer::kNccl);
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 256 * MiB + 1), TableAnswer::kOutsideRows);
  // A class without rows of its own: `any`'s rows.
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kBf16, 64 * KiB), TableAnswer::kPeerreduce);
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kBf16, 64 * KiB + 1), TableAnswer::kOutsideRows);
  EXPECT_EQ(at(Collective::kBroadcast, DtypeClass::kInt8, 4 * KiB - 1), TableAnswer::kOutsideRows);
  EXPECT_EQ(at(Collective::kBroadcast, DtypeClass::kInt8, 6 * KiB), TableAnswer::kPeerreduce);
  EXPECT_EQ(at(Collective::kBroadcast, DtypeClass::kFp32, 6 * KiB), TableAnswer::kUnmeasured);
  EXPECT_EQ(at(Collective::kAllGather, DtypeClass::kFp32, 1), TableAnswer::kUnmeasured);
  EXPECT_EQ(at(Collective::kAllReduce, DtypeClass::kFp32, 1, 2), TableAnswer::kUnmeasured);
  EXPECT_EQ(table->lookup(Collective::kAllReduce, "sm_80", 4, DtypeClass::kFp32, 1), TableAnswer::kUnmeasured);
  // Narrowed to one machine, the same answers there and none elsewhere.
  const TakeTable narrowed = table->narrowedTo("sm_90", 4);
  EXPECT_EQ(narrowed.entries().size(), 4u);
  EXPECT_EQ(narrowed.lookup(Collective::kAllReduce, "sm_90", 4, DtypeClass::kFp32, 16 * MiB + 1), TableAnswer::kNccl);
  EXPECT_TRUE(table->narrowedTo("sm_90", 2).entries().empty());
  // The formatted text parses back to the same rows.
  auto again = TakeTable::parse(table->format());
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again->format(), table->format());
}

TEST(Core, DtypeClasses) {
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kInt8)), DtypeClass::kInt8);
  EXPECT_EQ(dtypeClassOf(kUint8), DtypeClass::kInt8);
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kUint32)), DtypeClass::kInt32);
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kInt64)), DtypeClass::kInt64);
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kFloat16)), DtypeClass::kFp16);
  EXPECT_EQ(dtypeClassOf(kBfloat16), DtypeClass::kBf16);
  EXPECT_EQ(dtypeClassOf(kTakeTableFloat32), DtypeClass::kFp32);
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kFloat64)), DtypeClass::kFp64);
  // The two 8-bit floats share a class (one byte each, the same conversions per step).
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kFloat8e4m3)), DtypeClass::kFp8);
  EXPECT_EQ(dtypeClassOf(static_cast<int>(NcclDataType::kFloat8e5m2)), DtypeClass::kFp8);
  EXPECT_EQ(dtypeClassName(DtypeClass::kFp8), "fp8");
  auto table = TakeTable::parse("peerreduce-nccl-take 1\nentry allreduce sm_90 4 fp8 0 1M peerreduce\n");
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  EXPECT_EQ(table->lookup(Collective::kAllReduce, "sm_90", 4, DtypeClass::kFp8, 1024), TableAnswer::kPeerreduce);
  EXPECT_EQ(table->lookup(Collective::kAllReduce, "sm_90", 4, DtypeClass::kFp16, 1024), TableAnswer::kUnmeasured);
  EXPECT_EQ(dtypeClassOf(99), std::nullopt);
  EXPECT_EQ(dtypeClassName(DtypeClass::kBf16), "bf16");
}

CallShape takeShape(CallKind kind, std::uint64_t bytes, int dtype = kTakeTableFloat32) {
  CallShape call;
  call.kind = kind;
  call.bytes = bytes;
  call.dtype = dtype;
  call.op = kTakeTableSum;
  return call;
}

// Auto mode with the built-in table on `world` ranks of `arch`.
TakeDecision builtin(const char* arch, int world, const CallShape& call,
                     std::uint64_t max_bytes = TakeSettings{}.max_bytes) {
  TakeSettings settings;
  settings.max_bytes = max_bytes;
  const TakeTable rows = builtinTakeTable().narrowedTo(arch, world);
  return decideTake(settings, CommFacts{true, arch, world, &rows}, call, nullptr);
}

// The measurements the built-in table carries (nccl/builtin_take_table.cc), decision by decision.
TEST(Core, BuiltinTakeTableTakesWhereMeasuredFaster) {
  struct Row {
    const char* what;
    const char* arch;
    int world;
    CallShape call;
    bool take;
    TakeReason reason;
  };
  const Row rows[] = {
      {"4 ranks: 4 KiB allreduce (0.41)", "sm_90", 4, takeShape(CallKind::kAllReduce, 4 * KiB), true,
       TakeReason::kTaken},
      {"4 ranks: 1 MiB allreduce (0.88)", "sm_90", 4, takeShape(CallKind::kAllReduce, MiB), true, TakeReason::kTaken},
      {"4 ranks: 2 MiB allreduce (1.08)", "sm_90", 4, takeShape(CallKind::kAllReduce, 2 * MiB), false,
       TakeReason::kNcclMeasured},
      {"4 ranks: 64 MiB allreduce (1.14), under a raised cap", "sm_90", 4, takeShape(CallKind::kAllReduce, 64 * MiB),
       false, TakeReason::kNcclMeasured},
      {"4 ranks: above every measurement", "sm_90", 4, takeShape(CallKind::kAllReduce, 512 * MiB), false,
       TakeReason::kUnmeasured},
      {"2 ranks: 1 MiB allreduce (0.68, one-shot lines)", "sm_90", 2, takeShape(CallKind::kAllReduce, MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 64 MiB allreduce (0.88, pushed in pieces)", "sm_90", 2, takeShape(CallKind::kAllReduce, 64 * MiB),
       true, TakeReason::kTaken},
      {"2 ranks: 256 MiB allreduce (streamed, 0.91)", "sm_90", 2, takeShape(CallKind::kAllReduce, 256 * MiB), true,
       TakeReason::kTaken},
      {"4 ranks: 512 KiB reduce-scatter (0.69)", "sm_90", 4, takeShape(CallKind::kReduceScatter, 512 * KiB), true,
       TakeReason::kTaken},
      {"4 ranks: 2 MiB reduce-scatter (0.81, 512 KiB blocks as lines)", "sm_90", 4,
       takeShape(CallKind::kReduceScatter, 2 * MiB), true, TakeReason::kTaken},
      {"4 ranks: 8 MiB reduce-scatter (0.91)", "sm_90", 4, takeShape(CallKind::kReduceScatter, 8 * MiB), true,
       TakeReason::kTaken},
      {"4 ranks: 32 MiB reduce-scatter (1.01)", "sm_90", 4, takeShape(CallKind::kReduceScatter, 32 * MiB), false,
       TakeReason::kNcclMeasured},
      {"4 ranks: 512 KiB all-gather", "sm_90", 4, takeShape(CallKind::kAllGather, 512 * KiB), true, TakeReason::kTaken},
      {"4 ranks: 2 MiB all-gather (0.74, 512 KiB blocks as lines)", "sm_90", 4,
       takeShape(CallKind::kAllGather, 2 * MiB), true, TakeReason::kTaken},
      {"4 ranks: 64 MiB all-gather (1.08)", "sm_90", 4, takeShape(CallKind::kAllGather, 64 * MiB), false,
       TakeReason::kNcclMeasured},
      {"4 ranks: 32 MiB all-gather (0.96)", "sm_90", 4, takeShape(CallKind::kAllGather, 32 * MiB), true,
       TakeReason::kTaken},
      {"4 ranks: 256 KiB broadcast (0.78)", "sm_90", 4, takeShape(CallKind::kBroadcast, 256 * KiB), true,
       TakeReason::kTaken},
      {"4 ranks: ncclBcast is a broadcast", "sm_90", 4, takeShape(CallKind::kBcast, 128 * KiB), true,
       TakeReason::kTaken},
      {"4 ranks: 512 KiB broadcast (1.69)", "sm_90", 4, takeShape(CallKind::kBroadcast, 512 * KiB), false,
       TakeReason::kNcclMeasured},
      {"2 ranks: a bf16 allreduce of 16 MiB (0.90)", "sm_90", 2, takeShape(CallKind::kAllReduce, 16 * MiB, kBfloat16),
       true, TakeReason::kTaken},
      {"2 ranks: a bf16 allreduce above every measurement", "sm_90", 2,
       takeShape(CallKind::kAllReduce, 512 * MiB, kBfloat16), false, TakeReason::kUnmeasured},
      {"2 ranks: an fp16 allreduce of 1 MiB (unmeasured: bf16's rows are not fp16's)", "sm_90", 2,
       takeShape(CallKind::kAllReduce, MiB, kFloat16), false, TakeReason::kUnmeasured},
      {"2 ranks host-staged: 256 KiB allreduce (host lines, 0.64)", "sm_90-host", 2,
       takeShape(CallKind::kAllReduce, 256 * KiB), true, TakeReason::kTaken},
      {"2 ranks host-staged: 1 MiB allreduce (the pull, 1.42)", "sm_90-host", 2, takeShape(CallKind::kAllReduce, MiB),
       false, TakeReason::kNcclMeasured},
      {"2 ranks host-staged: 16 MiB allreduce (pushed, 1.16)", "sm_90-host", 2,
       takeShape(CallKind::kAllReduce, 16 * MiB), false, TakeReason::kNcclMeasured},
      {"2 ranks host-staged: 256 MiB allreduce (pushed, 0.83)", "sm_90-host", 2,
       takeShape(CallKind::kAllReduce, 256 * MiB), true, TakeReason::kTaken},
      {"2 ranks host-staged: a reduce-scatter (unmeasured there: the NVLink rows do not speak)", "sm_90-host", 2,
       takeShape(CallKind::kReduceScatter, 4 * KiB), false, TakeReason::kUnmeasured},
      {"4 ranks host-staged: 4 KiB allreduce (unmeasured: the small-allreduce default)", "sm_90-host", 4,
       takeShape(CallKind::kAllReduce, 4 * KiB), true, TakeReason::kTakenUnmeasured},
      // Unmeasured: small allreduces only.
      {"4 ranks: a bf16 allreduce of 256 KiB", "sm_90", 4, takeShape(CallKind::kAllReduce, 256 * KiB, kBfloat16), true,
       TakeReason::kTakenUnmeasured},
      {"4 ranks: a bf16 allreduce of 1 MiB", "sm_90", 4, takeShape(CallKind::kAllReduce, MiB, kBfloat16), false,
       TakeReason::kUnmeasured},
      {"8 ranks: 256 KiB allreduce", "sm_90", 8, takeShape(CallKind::kAllReduce, 256 * KiB), true,
       TakeReason::kTakenUnmeasured},
      {"8 ranks: 256 KiB + 1 allreduce", "sm_90", 8, takeShape(CallKind::kAllReduce, 256 * KiB + 1), false,
       TakeReason::kUnmeasured},
      {"2 ranks: a small reduce-scatter (0.48)", "sm_90", 2, takeShape(CallKind::kReduceScatter, 4 * KiB), true,
       TakeReason::kTaken},
      {"2 ranks: 16 MiB all-gather (0.76)", "sm_90", 2, takeShape(CallKind::kAllGather, 16 * MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 4 KiB broadcast (one-shot lines, 0.50)", "sm_90", 2, takeShape(CallKind::kBroadcast, 4 * KiB), true,
       TakeReason::kTaken},
      {"2 ranks: 512 KiB broadcast (one-shot lines, 0.54)", "sm_90", 2, takeShape(CallKind::kBroadcast, 512 * KiB),
       true, TakeReason::kTaken},
      {"2 ranks: 1 MiB broadcast (one-shot lines, 0.65)", "sm_90", 2, takeShape(CallKind::kBroadcast, MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 1.125 MiB broadcast (the one-shot in the interpreter, 0.87)", "sm_90", 2,
       takeShape(CallKind::kBroadcast, MiB + MiB / 8), true, TakeReason::kTaken},
      {"2 ranks: 2 MiB reduce-scatter (1 MiB blocks as lines, 0.62)", "sm_90", 2,
       takeShape(CallKind::kReduceScatter, 2 * MiB), true, TakeReason::kTaken},
      {"2 ranks: 1 MiB all-gather (one-shot, 0.56)", "sm_90", 2, takeShape(CallKind::kAllGather, MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 256 MiB all-gather (pushed, 0.79)", "sm_90", 2, takeShape(CallKind::kAllGather, 256 * MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 1 MiB reduce-scatter (one-shot, 0.60)", "sm_90", 2, takeShape(CallKind::kReduceScatter, MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 256 MiB reduce-scatter (pushed, 0.89)", "sm_90", 2, takeShape(CallKind::kReduceScatter, 256 * MiB),
       true, TakeReason::kTaken},
      {"2 ranks: 3 MiB broadcast (pushed; 1 MiB 0.66, 4 MiB 0.81)", "sm_90", 2,
       takeShape(CallKind::kBroadcast, 3 * MiB), true, TakeReason::kTaken},
      {"2 ranks: 8 MiB broadcast (pushed, 0.92)", "sm_90", 2, takeShape(CallKind::kBroadcast, 8 * MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 32 MiB broadcast (0.92)", "sm_90", 2, takeShape(CallKind::kBroadcast, 32 * MiB), true,
       TakeReason::kTaken},
      {"2 ranks: 32 MiB + 1 broadcast (next to 64 MiB's loss)", "sm_90", 2,
       takeShape(CallKind::kBroadcast, 32 * MiB + 1), false, TakeReason::kNcclMeasured},
      {"2 ranks: 64 MiB broadcast (streamed, 1.01)", "sm_90", 2, takeShape(CallKind::kBroadcast, 64 * MiB), false,
       TakeReason::kNcclMeasured},
      {"2 ranks: 32 MiB reduce-scatter (0.80)", "sm_90", 2, takeShape(CallKind::kReduceScatter, 32 * MiB), true,
       TakeReason::kTaken},
      {"2 ranks: a reduce-scatter above every measurement", "sm_90", 2, takeShape(CallKind::kReduceScatter, 512 * MiB),
       false, TakeReason::kUnmeasured},
      {"another GPU: a small broadcast", "gfx942", 4, takeShape(CallKind::kBroadcast, 128), false,
       TakeReason::kUnmeasured},
      {"the simulator: a small allreduce", "simulator", 4, takeShape(CallKind::kAllReduce, 1024, kUint8), true,
       TakeReason::kTakenUnmeasured},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const TakeDecision decision = builtin(row.arch, row.world, row.call);
    EXPECT_EQ(decision.take, row.take);
    EXPECT_EQ(decision.reason, row.reason) << takeReasonText(decision.reason);
  }
}

// PEERREDUCE_NCCL_MAX_BYTES caps the table: nothing above it is taken, whatever a row says. Unset, the
// table alone decides: DDP's 25 MiB buckets at two ranks are taken where the rows measured a win.
TEST(Core, MaxBytesCapsTheTakeTable) {
  EXPECT_EQ(builtin("sm_90", 4, takeShape(CallKind::kAllReduce, MiB)).reason, TakeReason::kTaken);
  EXPECT_EQ(builtin("sm_90", 2, takeShape(CallKind::kAllReduce, 25 * MiB)).reason, TakeReason::kTaken);
  EXPECT_EQ(builtin("sm_90", 2, takeShape(CallKind::kAllReduce, 25 * MiB), 16 * MiB).reason, TakeReason::kTooLarge);
  EXPECT_EQ(builtin("sm_90", 4, takeShape(CallKind::kAllReduce, MiB), 512 * KiB).reason, TakeReason::kTooLarge);
  EXPECT_EQ(builtin("sm_90", 8, takeShape(CallKind::kAllReduce, 64 * KiB), 4 * KiB).reason, TakeReason::kTooLarge);
}

// Without a table every case is unmeasured; mode all ignores the table.
TEST(Core, TakeDecisionWithoutATable) {
  TakeSettings automatic;
  const CommFacts none{true, "sm_90", 4, nullptr};
  EXPECT_EQ(decideTake(automatic, none, takeShape(CallKind::kAllReduce, 1024), nullptr).reason,
            TakeReason::kTakenUnmeasured);
  EXPECT_EQ(decideTake(automatic, none, takeShape(CallKind::kAllGather, 1024), nullptr).reason,
            TakeReason::kUnmeasured);
  TakeSettings all;
  all.mode = TakeMode::kAll;
  const TakeTable rows = builtinTakeTable().narrowedTo("sm_90", 4);
  EXPECT_EQ(
      decideTake(all, CommFacts{true, "sm_90", 4, &rows}, takeShape(CallKind::kAllGather, 8 * MiB), nullptr).reason,
      TakeReason::kTakenAll);
}

// A world with any host-staged pair has rows of its own: its architecture with the suffix.
TEST(Core, HostStagedWorldsLookUpTheirOwnArchitecture) {
  EXPECT_EQ(takeTableArchitecture("sm_90", false), "sm_90");
  EXPECT_EQ(takeTableArchitecture("sm_90", true), "sm_90-host");
  EXPECT_EQ(takeTableArchitecture("simulator", true), "simulator-host");
  auto table = TakeTable::parse(
      "peerreduce-nccl-take 1\n"
      "entry allreduce sm_90 2 fp32 0 1M peerreduce\n"
      "entry allreduce sm_90-host 2 fp32 0 1M nccl\n");
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  EXPECT_EQ(table->lookup(Collective::kAllReduce, takeTableArchitecture("sm_90", false), 2, DtypeClass::kFp32, MiB),
            TableAnswer::kPeerreduce);
  EXPECT_EQ(table->lookup(Collective::kAllReduce, takeTableArchitecture("sm_90", true), 2, DtypeClass::kFp32, MiB),
            TableAnswer::kNccl);
  EXPECT_EQ(table->narrowedTo("sm_90-host", 2).entries().size(), 1u);
}

TEST(Core, BuiltinTakeTableParsesAndFormatsTheSame) {
  auto parsed = TakeTable::parse(builtinTakeText());
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->format(), builtinTakeTable().format());
  EXPECT_EQ(parsed->entries().size(), 17u);
}

// A folder of its own for the test's files, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "peerreduce_take_XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// PEERREDUCE_NCCL_TAKE_TABLE replaces the built-in table; ranks with different rows disagree (the
// fingerprint), ranks with the same rows written differently agree; a file that does not parse names
// itself, the setting and the line.
TEST(Core, TakeTableSettingReplacesTheBuiltinTable) {
  const TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string mine = writeFile(dir.path() + "/take.txt",
                                     "peerreduce-nccl-take 1\n"
                                     "entry all-gather simulator 4 any 0 1M peerreduce\n");
  const std::string same = writeFile(dir.path() + "/same.txt",
                                     "# the same row, another comment\n"
                                     "peerreduce-nccl-take 1\n"
                                     "entry all-gather simulator 4 any 0 1048576 peerreduce\n");
  const std::string broken = writeFile(dir.path() + "/broken.txt",
                                       "peerreduce-nccl-take 1\n"
                                       "entry all-gather simulator 4 any 0 1M sometimes\n");
  const auto with = [](const std::string& path) {
    return [path](const char* name) -> const char* {
      return std::string(name) == "PEERREDUCE_NCCL_TAKE_TABLE" ? path.c_str() : nullptr;
    };
  };
  auto settings = readNcclSettings(with(mine));
  ASSERT_TRUE(settings.isOk()) << settings.status().toString();
  ASSERT_NE(settings->take_table, nullptr);
  EXPECT_EQ(settings->take_table->lookup(Collective::kAllGather, "simulator", 4, DtypeClass::kFp64, MiB),
            TableAnswer::kPeerreduce);
  EXPECT_EQ(settings->take_table->lookup(Collective::kAllReduce, "sm_90", 4, DtypeClass::kFp32, 1024),
            TableAnswer::kUnmeasured)
      << "the built-in rows are gone";
  auto builtin_settings = readNcclSettings([](const char*) -> const char* { return nullptr; });
  ASSERT_TRUE(builtin_settings.isOk());
  ASSERT_NE(builtin_settings->take_table, nullptr);
  EXPECT_EQ(builtin_settings->take_table->format(), builtinTakeTable().format());
  // An empty value is unset: the built-in table.
  auto empty = readNcclSettings(with(""));
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ(empty->take_table->format(), builtinTakeTable().format());
  EXPECT_NE(settings->agreedFingerprint(), builtin_settings->agreedFingerprint());
  auto same_settings = readNcclSettings(with(same));
  ASSERT_TRUE(same_settings.isOk());
  EXPECT_EQ(settings->agreedFingerprint(), same_settings->agreedFingerprint());

  auto bad = readNcclSettings(with(broken));
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  const std::string message = bad.status().message();
  EXPECT_TRUE(contains(message, broken)) << message;
  EXPECT_TRUE(contains(message, "PEERREDUCE_NCCL_TAKE_TABLE")) << message;
  EXPECT_TRUE(contains(message, "line 2: unknown choice 'sometimes'")) << message;
  auto missing = readNcclSettings(with(dir.path() + "/none.txt"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(missing.status().message(), "PEERREDUCE_NCCL_TAKE_TABLE")) << missing.status().message();
  auto directory = readNcclSettings(with(dir.path()));
  ASSERT_FALSE(directory.isOk());
  EXPECT_TRUE(contains(directory.status().message(), "is a directory")) << directory.status().message();
}

}  // namespace
}  // namespace peerreduce::nccl
