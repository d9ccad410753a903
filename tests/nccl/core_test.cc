// The NCCL-compatible library's pure parts: the take table row by row, NCCL's values in peerreduce's terms,
// the counters' summary line and the PEERREDUCE_NCCL_* settings.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "nccl/call_counters.h"
#include "nccl/nccl_settings.h"
#include "nccl/nccl_values.h"
#include "nccl/peer_side.h"
#include "nccl/take_policy.h"
#include "nccl/type_mapping.h"

namespace peerreduce::nccl {
namespace {

constexpr int kCoreFloat32 = static_cast<int>(NcclDataType::kFloat32);
constexpr int kCoreSum = static_cast<int>(NcclRedOp::kSum);

CallShape shape(CallKind kind, std::size_t bytes, int dtype = kCoreFloat32, int op = kCoreSum) {
  CallShape call;
  call.kind = kind;
  call.bytes = bytes;
  call.dtype = dtype;
  call.op = op;
  return call;
}

TakeSettings mode(TakeMode take, std::uint64_t max_bytes = std::uint64_t{16} << 20) {
  TakeSettings settings;
  settings.mode = take;
  settings.max_bytes = max_bytes;
  return settings;
}

// PEERREDUCE_NCCL_TAKE_AVG=0 (avg is taken by default).
TakeSettings withoutAvg(TakeSettings settings) {
  settings.take_avg = false;
  return settings;
}

const auto kNeverRing = [](std::size_t) { return false; };

// A table whose rows take every size of every collective on a 4-rank "test" machine, so the rows below
// exercise the policy's other rows (the measurements have their own tests, take_table_test.cc).
const TakeTable& takesEverything() {
  static const TakeTable table = [] {
    auto parsed = TakeTable::parse(
        "peerreduce-nccl-take 1\n"
        "entry allreduce test 4 any 0 9223372036854775807 peerreduce\n"
        "entry reduce-scatter test 4 any 0 9223372036854775807 peerreduce\n"
        "entry all-gather test 4 any 0 9223372036854775807 peerreduce\n"
        "entry broadcast test 4 any 0 9223372036854775807 peerreduce\n");
    EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
    return parsed.isOk() ? *parsed : TakeTable{};
  }();
  return table;
}

CommFacts facts(bool has_communicator) { return CommFacts{has_communicator, "test", 4, &takesEverything()}; }

// Each row of the table in take_policy.h, with the reason it gives.
TEST(Core, TakeTableRows) {
  struct Row {
    const char* what;
    TakeSettings settings;
    bool has_communicator;
    CallShape call;
    bool take;
    TakeReason reason;
  };
  const int avg = static_cast<int>(NcclRedOp::kAvg);
  const int created_op = kNcclBuiltinOpCount + 3;
  const int fp8 = static_cast<int>(NcclDataType::kFloat8e4m3);
  const Row rows[] = {
      {"mode none", mode(TakeMode::kNone), true, shape(CallKind::kAllReduce, 64), false, TakeReason::kModeNone},
      {"no communicator", mode(TakeMode::kAll), false, shape(CallKind::kAllReduce, 64), false,
       TakeReason::kNoCommunicator},
      {"reduce", mode(TakeMode::kAll), true, shape(CallKind::kReduce, 64), false, TakeReason::kNotPeerreduceKind},
      {"send", mode(TakeMode::kAll), true, shape(CallKind::kSend, 64), false, TakeReason::kNotPeerreduceKind},
      {"recv", mode(TakeMode::kAll), true, shape(CallKind::kRecv, 64), false, TakeReason::kNotPeerreduceKind},
      {"8-bit float", mode(TakeMode::kAll), true, shape(CallKind::kAllGather, 64, fp8), true, TakeReason::kTakenAll},
      {"auto: an unmeasured 8-bit float allreduce", mode(TakeMode::kAuto), true,
       shape(CallKind::kAllReduce, 64, static_cast<int>(NcclDataType::kFloat8e5m2)), true, TakeReason::kTaken},
      {"unknown type", mode(TakeMode::kAll), true, shape(CallKind::kBroadcast, 64, 12), false, TakeReason::kDataType},
      {"avg switched off", withoutAvg(mode(TakeMode::kAll)), true, shape(CallKind::kAllReduce, 64, kCoreFloat32, avg),
       false, TakeReason::kAverage},
      {"integer avg switched off", withoutAvg(mode(TakeMode::kAll)), true,
       shape(CallKind::kReduceScatter, 64, static_cast<int>(NcclDataType::kInt32), avg), false, TakeReason::kAverage},
      {"avg by default", mode(TakeMode::kAll), true, shape(CallKind::kAllReduce, 64, kCoreFloat32, avg), true,
       TakeReason::kTakenAll},
      {"auto: integer avg by default", mode(TakeMode::kAuto), true,
       shape(CallKind::kReduceScatter, 64, static_cast<int>(NcclDataType::kUint8), avg), true, TakeReason::kTaken},
      {"8-bit float avg switched off", withoutAvg(mode(TakeMode::kAll)), true,
       shape(CallKind::kAllReduce, 64, fp8, avg), false, TakeReason::kAverage},
      {"avg by default: an 8-bit float too", mode(TakeMode::kAll), true, shape(CallKind::kAllReduce, 64, fp8, avg),
       true, TakeReason::kTakenAll},
      {"avg by default: a created operator is not avg", mode(TakeMode::kAll), true,
       shape(CallKind::kAllReduce, 64, kCoreFloat32, created_op), false, TakeReason::kOtherOperator},
      {"created operator", mode(TakeMode::kAll), true, shape(CallKind::kAllReduce, 64, kCoreFloat32, created_op), false,
       TakeReason::kOtherOperator},
      {"all takes a huge one", mode(TakeMode::kAll, 1), true, shape(CallKind::kAllReduce, 1 << 30), true,
       TakeReason::kTakenAll},
      {"auto: above the limit", mode(TakeMode::kAuto, 4096), true, shape(CallKind::kAllGather, 4097), false,
       TakeReason::kTooLarge},
      {"auto: at the limit", mode(TakeMode::kAuto, 4096), true, shape(CallKind::kAllGather, 4096), true,
       TakeReason::kTaken},
      {"auto: broadcast ignores the op", mode(TakeMode::kAuto), true,
       shape(CallKind::kBroadcast, 64, kCoreFloat32, avg), true, TakeReason::kTaken},
      {"auto: overflowing size", mode(TakeMode::kAuto), true,
       shape(CallKind::kAllReduce, std::numeric_limits<std::size_t>::max()), false, TakeReason::kTooLarge},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const TakeDecision decision = decideTake(row.settings, facts(row.has_communicator), row.call, kNeverRing);
    EXPECT_EQ(decision.take, row.take);
    EXPECT_EQ(decision.reason, row.reason) << takeReasonText(decision.reason);
  }
}

TEST(Core, TakeTableSharedTypesAndOperators) {
  for (int dtype = 0; dtype < kNcclDataTypeCount; ++dtype) {
    for (int op = 0; op < kNcclBuiltinOpCount; ++op) {
      const CallShape call = shape(CallKind::kAllReduce, 1024, dtype, op);
      // Every NCCL type, the 8-bit floats included, and every built-in operator is peerreduce's; avg only
      // while PEERREDUCE_NCCL_TAKE_AVG is on (the default).
      EXPECT_TRUE(decideTake(mode(TakeMode::kAuto), facts(true), call, kNeverRing).take)
          << ncclDataTypeName(dtype) << " " << ncclRedOpName(op);
      const bool without_avg = op != static_cast<int>(NcclRedOp::kAvg);
      EXPECT_EQ(decideTake(withoutAvg(mode(TakeMode::kAuto)), facts(true), call, kNeverRing).take, without_avg)
          << ncclDataTypeName(dtype) << " " << ncclRedOpName(op);
    }
  }
}

// The selection is asked only in auto mode, for an allreduce every other row takes.
TEST(Core, RingSelectionForwardsAutoAllreducesOnly) {
  int asked = 0;
  const auto ring = [&asked](std::size_t) {
    ++asked;
    return true;
  };
  TakeDecision decision = decideTake(mode(TakeMode::kAuto), facts(true), shape(CallKind::kAllReduce, 1024), ring);
  EXPECT_FALSE(decision.take);
  EXPECT_EQ(decision.reason, TakeReason::kRingSelected);
  EXPECT_EQ(asked, 1);
  decision = decideTake(mode(TakeMode::kAll), facts(true), shape(CallKind::kAllReduce, 1024), ring);
  EXPECT_TRUE(decision.take);
  decision = decideTake(mode(TakeMode::kAuto), facts(true), shape(CallKind::kReduceScatter, 1024), ring);
  EXPECT_TRUE(decision.take);
  decision = decideTake(mode(TakeMode::kAuto, 16), facts(true), shape(CallKind::kAllReduce, 1024), ring);
  EXPECT_EQ(decision.reason, TakeReason::kTooLarge);
  EXPECT_EQ(asked, 1);
}

TEST(Core, NcclValuesInPeerreduceTerms) {
  EXPECT_EQ(peerreduceDataType(static_cast<int>(NcclDataType::kBfloat16)), DataType::kBFloat16);
  EXPECT_EQ(peerreduceDataType(static_cast<int>(NcclDataType::kFloat32)), DataType::kFloat32);
  EXPECT_EQ(peerreduceDataType(static_cast<int>(NcclDataType::kFloat8e4m3)), DataType::kFloat8E4M3);
  EXPECT_EQ(peerreduceDataType(static_cast<int>(NcclDataType::kFloat8e5m2)), DataType::kFloat8E5M2);
  EXPECT_EQ(peerreduceDataType(-1), std::nullopt);
  EXPECT_EQ(peerreduceDataType(kNcclDataTypeCount), std::nullopt);
  EXPECT_EQ(ncclDataTypeBytes(static_cast<int>(NcclDataType::kFloat8e4m3)), 1u);
  EXPECT_EQ(ncclDataTypeBytes(static_cast<int>(NcclDataType::kFloat8e5m2)), 1u);
  EXPECT_STREQ(ncclDataTypeName(static_cast<int>(NcclDataType::kFloat8e4m3)), "fp8e4m3");
  EXPECT_STREQ(ncclDataTypeName(static_cast<int>(NcclDataType::kFloat8e5m2)), "fp8e5m2");
  EXPECT_STREQ(ncclDataTypeName(kNcclDataTypeCount), "unknown");
  EXPECT_EQ(ncclDataTypeBytes(static_cast<int>(NcclDataType::kInt64)), 8u);
  EXPECT_EQ(ncclDataTypeBytes(99), 0u);
  // NCCL numbers max before min; peerreduce the other way round.
  EXPECT_EQ(peerreduceReduceOp(static_cast<int>(NcclRedOp::kMax)), ReduceOp::kMax);
  EXPECT_EQ(peerreduceReduceOp(static_cast<int>(NcclRedOp::kMin)), ReduceOp::kMin);
  EXPECT_EQ(peerreduceReduceOp(static_cast<int>(NcclRedOp::kAvg)), ReduceOp::kAvg);
  EXPECT_STREQ(ncclRedOpName(7), "created operator 7");
  EXPECT_STREQ(ncclRedOpName(-2), "unknown operator -2");
  EXPECT_EQ(toPrDataType(static_cast<int>(NcclDataType::kFloat16)), prFloat16);
  EXPECT_EQ(toPrRedOp(static_cast<int>(NcclRedOp::kMin)), prMin);
  EXPECT_EQ(toPrDataType(static_cast<int>(NcclDataType::kFloat8e4m3)), prFloat8e4m3);
  EXPECT_EQ(toPrDataType(static_cast<int>(NcclDataType::kFloat8e5m2)), prFloat8e5m2);
  EXPECT_EQ(toPrDataType(kNcclDataTypeCount), prNumDataTypes);
}

TEST(Core, PeerreduceErrorsBecomeNcclResults) {
  EXPECT_EQ(ncclResultFor(ErrorCode::kOk), NcclResult::kSuccess);
  EXPECT_EQ(ncclResultFor(ErrorCode::kInvalidArgument), NcclResult::kInvalidArgument);
  EXPECT_EQ(ncclResultFor(ErrorCode::kMismatch), NcclResult::kInvalidUsage);
  EXPECT_EQ(ncclResultFor(ErrorCode::kAborted), NcclResult::kInvalidUsage);
  EXPECT_EQ(ncclResultFor(ErrorCode::kUnsupported), NcclResult::kInvalidUsage);
  EXPECT_EQ(ncclResultFor(ErrorCode::kTimeout), NcclResult::kRemoteError);
  EXPECT_EQ(ncclResultFor(ErrorCode::kPeerLost), NcclResult::kRemoteError);
  EXPECT_EQ(ncclResultFor(ErrorCode::kOutOfMemory), NcclResult::kSystemError);
  EXPECT_EQ(ncclResultFor(ErrorCode::kUnavailable), NcclResult::kSystemError);
  EXPECT_EQ(ncclResultFor(ErrorCode::kInternal), NcclResult::kInternalError);
}

TEST(Core, CountersSummaryLine) {
  CallCounters counters;
  counters.count(CallKind::kAllReduce, true, 1024);
  counters.count(CallKind::kAllReduce, true, 1024);
  counters.count(CallKind::kAllReduce, false, 1 << 20);
  counters.count(CallKind::kSend, false, 8);
  EXPECT_EQ(describeCounters(counters, 1, 4, ""),
            "rank 1 of 4: took 2 calls (2048 bytes), forwarded 2 calls (1048584 bytes); ncclAllReduce 2 taken / 1 "
            "forwarded, ncclSend 0 taken / 1 forwarded");
  // Timed calls (the summary's host times): mean and most per side.
  counters.time(true, 2000);
  counters.time(true, 9800);
  counters.time(false, 400);
  EXPECT_EQ(describeCounters(counters, 1, 4, ""),
            "rank 1 of 4: took 2 calls (2048 bytes), forwarded 2 calls (1048584 bytes); ncclAllReduce 2 taken / 1 "
            "forwarded, ncclSend 0 taken / 1 forwarded; host time per call: taken 5.9 us (most 9.8), forwarded 0.4 "
            "us (most 0.4)");
  CallCounters only_taken;
  only_taken.time(true, 1000);
  EXPECT_NE(describeCounters(only_taken, 0, 2, "").find("taken 1.0 us (most 1.0), forwarded none timed"),
            std::string::npos)
      << describeCounters(only_taken, 0, 2, "");
  EXPECT_EQ(
      describeCounters(CallCounters{}, 0, 2, "PEERREDUCE_NCCL_TAKE=none"),
      "rank 0 of 2: took 0 calls (0 bytes), forwarded 0 calls (0 bytes); nothing taken: PEERREDUCE_NCCL_TAKE=none");
}

TEST(Core, SettingsFromTheEnvironment) {
  const auto env = [](const char* name) -> const char* {
    const std::string n = name;
    if (n == "PEERREDUCE_NCCL_TAKE") return "all";
    if (n == "PEERREDUCE_NCCL_MAX_BYTES") return "64K";
    if (n == "PEERREDUCE_NCCL_SUMMARY") return "on";
    if (n == "PEERREDUCE_NCCL_TAKE_AVG") return "1";
    if (n == "PEERREDUCE_NCCL_SIMULATE") return "42";
    if (n == "PEERREDUCE_NCCL_LIB") return "/opt/nccl/libnccl.so.2";
    if (n == "PEERREDUCE_TIMEOUT_MS") return "5000";
    return nullptr;
  };
  auto settings = readNcclSettings(env);
  ASSERT_TRUE(settings.isOk()) << settings.status().toString();
  EXPECT_EQ(settings->take.mode, TakeMode::kAll);
  EXPECT_EQ(settings->take.max_bytes, 65536u);
  EXPECT_TRUE(settings->summary);
  EXPECT_TRUE(settings->take.take_avg);
  EXPECT_EQ(settings->simulate_seed, 42u);
  EXPECT_EQ(settings->timeout_ms, 5000);
  auto library = readLibraryChoice(env);
  ASSERT_TRUE(library.isOk());
  EXPECT_EQ(library->path, "/opt/nccl/libnccl.so.2");
  EXPECT_TRUE(library->from_setting);

  const auto nothing = [](const char*) -> const char* { return nullptr; };
  auto defaults = readNcclSettings(nothing);
  ASSERT_TRUE(defaults.isOk());
  EXPECT_EQ(defaults->take.mode, TakeMode::kAuto);
  EXPECT_EQ(defaults->take.max_bytes, UINT64_MAX) << "no cap: the take table decides at every size";
  EXPECT_FALSE(defaults->summary);
  EXPECT_TRUE(defaults->take.take_avg) << "avg is taken like sum unless PEERREDUCE_NCCL_TAKE_AVG=0";
  EXPECT_FALSE(defaults->simulate_seed.has_value());
  EXPECT_EQ(defaults->timeout_ms, kNcclTimeoutMs) << "NCCL waits until aborted: a long bound, not 30 s";
  EXPECT_EQ(kNcclTimeoutMs, 30 * 60 * 1000);
  EXPECT_EQ(readLibraryChoice(nothing)->path, "libnccl.so.2");
  EXPECT_FALSE(readLibraryChoice(nothing)->from_setting);
  // Every value ranks must agree on changes the fingerprint they compare; the summary switch does not.
  NcclSettings other = *defaults;
  other.take.mode = TakeMode::kNone;
  EXPECT_NE(other.agreedFingerprint(), defaults->agreedFingerprint());
  other = *defaults;
  other.take.max_bytes = 1;
  EXPECT_NE(other.agreedFingerprint(), defaults->agreedFingerprint());
  other = *defaults;
  other.take.take_avg = false;
  EXPECT_NE(other.agreedFingerprint(), defaults->agreedFingerprint());
  other = *defaults;
  other.simulate_seed = 0;
  EXPECT_NE(other.agreedFingerprint(), defaults->agreedFingerprint());
  other = *defaults;
  other.summary = true;
  EXPECT_EQ(other.agreedFingerprint(), defaults->agreedFingerprint());
}

TEST(Core, MalformedSettingsNameTheVariable) {
  const auto bad_take = [](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_NCCL_TAKE" ? "sometimes" : nullptr;
  };
  auto settings = readNcclSettings(bad_take);
  ASSERT_FALSE(settings.isOk());
  EXPECT_EQ(settings.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(settings.status().message().find("PEERREDUCE_NCCL_TAKE"), std::string::npos);
  EXPECT_NE(settings.status().message().find("sometimes"), std::string::npos);
  const auto bad_bytes = [](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_NCCL_MAX_BYTES" ? "lots" : nullptr;
  };
  EXPECT_NE(readNcclSettings(bad_bytes).status().message().find("PEERREDUCE_NCCL_MAX_BYTES"), std::string::npos);
  const auto bad_avg = [](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_NCCL_TAKE_AVG" ? "maybe" : nullptr;
  };
  EXPECT_NE(readNcclSettings(bad_avg).status().message().find("PEERREDUCE_NCCL_TAKE_AVG"), std::string::npos);
  const auto bad_timeout = [](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_TIMEOUT_MS" ? "0" : nullptr;
  };
  EXPECT_NE(readNcclSettings(bad_timeout).status().message().find("PEERREDUCE_TIMEOUT_MS"), std::string::npos);
}

// peerreduce's side is created with the environment's settings and the NCCL library's deadline.
TEST(Core, PeerSideUsesTheNcclLibrarysDeadline) {
  NcclSettings settings;
  auto config = peerSideConfig(settings);
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->timeout_ms, kNcclTimeoutMs);
  settings.timeout_ms = 1234;
  EXPECT_EQ(peerSideConfig(settings)->timeout_ms, 1234);
}

}  // namespace
}  // namespace peerreduce::nccl
