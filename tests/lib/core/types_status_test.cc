// Status, StatusOr and the enum names of peerreduce/status.h and peerreduce/types.h: every code and
// every value has its name, names parse back, unknown names are rejected with the accepted list.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {
namespace {

constexpr int kErrorCodeCount = 13;  // kOk .. kCorrupt

TEST(ErrorCodeName, EveryCodeHasADistinctNameAndUnknownValuesSaySo) {
  std::set<std::string> names;
  for (int code = 0; code < kErrorCodeCount; ++code) {
    const std::string name(errorCodeName(static_cast<ErrorCode>(code)));
    EXPECT_NE(name, "unknown error") << code;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kErrorCodeCount));
  EXPECT_EQ(errorCodeName(ErrorCode::kOk), "ok");
  EXPECT_EQ(errorCodeName(ErrorCode::kInternal), "internal error");
  EXPECT_EQ(errorCodeName(static_cast<ErrorCode>(kErrorCodeCount)), "unknown error");
  EXPECT_EQ(errorCodeName(static_cast<ErrorCode>(-1)), "unknown error");
}

TEST(Status, EachFactoryGivesItsCodeAndKeepsTheMessage) {
  const struct {
    Status status;
    ErrorCode code;
  } cases[] = {
      {invalidArgumentError("m"), ErrorCode::kInvalidArgument},
      {outOfMemoryError("m"), ErrorCode::kOutOfMemory},
      {timeoutError("m"), ErrorCode::kTimeout},
      {remoteError("m"), ErrorCode::kRemoteError},
      {peerLostError("m"), ErrorCode::kPeerLost},
      {linkDownError("m"), ErrorCode::kLinkDown},
      {abortedError("m"), ErrorCode::kAborted},
      {unsupportedError("m"), ErrorCode::kUnsupported},
      {internalError("m"), ErrorCode::kInternal},
      {unavailableError("m"), ErrorCode::kUnavailable},
      {mismatchError("m"), ErrorCode::kMismatch},
      {corruptError("m"), ErrorCode::kCorrupt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_FALSE(c.status.isOk());
    EXPECT_EQ(c.status.message(), "m");
    EXPECT_EQ(c.status.toString(), std::string(errorCodeName(c.code)) + ": m");
  }
}

TEST(Status, OkHasNoMessageAndPrintsOk) {
  const Status ok = Status::ok();
  EXPECT_TRUE(ok.isOk());
  EXPECT_EQ(ok.code(), ErrorCode::kOk);
  EXPECT_EQ(ok.message(), "");
  EXPECT_EQ(ok.toString(), "ok");
  EXPECT_EQ(ok, Status());
}

TEST(Status, WithContextPrefixesErrorsAndLeavesOkAlone) {
  const Status error = timeoutError("rank 2 never came");
  const Status wrapped = error.withContext("while creating rank 3");
  EXPECT_EQ(wrapped.code(), ErrorCode::kTimeout);
  EXPECT_EQ(wrapped.message(), "while creating rank 3: rank 2 never came");
  EXPECT_EQ(error.message(), "rank 2 never came") << "the original must not change";
  EXPECT_EQ(Status::ok().withContext("ignored"), Status::ok());
}

TEST(Status, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(invalidArgumentError("a"), invalidArgumentError("a"));
  EXPECT_FALSE(invalidArgumentError("a") == invalidArgumentError("b"));
  EXPECT_FALSE(invalidArgumentError("a") == internalError("a"));
}

TEST(StatusOr, HoldsAValueOrAnError) {
  StatusOr<int> value(7);
  ASSERT_TRUE(value.isOk());
  EXPECT_EQ(*value, 7);
  EXPECT_EQ(value.value(), 7);
  *value = 8;
  EXPECT_EQ(value.value(), 8);

  StatusOr<std::string> text(std::string("abc"));
  EXPECT_EQ(text->size(), 3u);
  const StatusOr<std::string>& const_text = text;
  EXPECT_EQ(const_text->size(), 3u);
  EXPECT_EQ(*const_text, "abc");
  EXPECT_EQ(const_text.value(), "abc");
  EXPECT_EQ(std::move(text).value(), "abc");

  StatusOr<int> error(mismatchError("ranks disagree"));
  EXPECT_FALSE(error.isOk());
  EXPECT_EQ(error.status().code(), ErrorCode::kMismatch);
}

// An ok Status carries no value, so a StatusOr built from one must not claim success.
TEST(StatusOr, BuiltFromAnOkStatusIsAnInternalError) {
  StatusOr<int> bad(Status::ok());
  EXPECT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInternal);
  EXPECT_NE(bad.status().message().find("without a value"), std::string::npos);
}

TEST(StatusOrDeathTest, ReadingTheValueOfAnErrorAbortsNamingTheError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  StatusOr<int> error(corruptError("bad record from rank 5"));
  EXPECT_DEATH((void)error.value(), "called on an error: corrupt: bad record from rank 5");
}

Status failsWith(ErrorCode code) { return code == ErrorCode::kOk ? Status::ok() : Status(code, "inner"); }
StatusOr<int> valueOrError(bool ok) { return ok ? StatusOr<int>(41) : StatusOr<int>(linkDownError("link 0-1")); }

Status useReturnIfError(ErrorCode code, bool* reached_end) {
  PR_RETURN_IF_ERROR(failsWith(code));
  *reached_end = true;
  return Status::ok();
}

StatusOr<int> useAssignOrReturn(bool ok) {
  PR_ASSIGN_OR_RETURN(int v, valueOrError(ok));
  return v + 1;
}

TEST(StatusMacros, ReturnIfErrorReturnsTheErrorAndContinuesOnOk) {
  bool reached = false;
  EXPECT_EQ(useReturnIfError(ErrorCode::kAborted, &reached).code(), ErrorCode::kAborted);
  EXPECT_FALSE(reached);
  EXPECT_TRUE(useReturnIfError(ErrorCode::kOk, &reached).isOk());
  EXPECT_TRUE(reached);
}

TEST(StatusMacros, AssignOrReturnUnwrapsOrPropagates) {
  auto ok = useAssignOrReturn(true);
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(*ok, 42);
  auto error = useAssignOrReturn(false);
  EXPECT_EQ(error.status(), linkDownError("link 0-1"));
}

// ---- types.h ------------------------------------------------------------------------------------

TEST(DataType, SizesAndFloatingPointClassification) {
  const struct {
    DataType dtype;
    std::size_t size;
    bool floating;
  } cases[] = {
      {DataType::kInt8, 1, false},   {DataType::kUint8, 1, false},     {DataType::kInt32, 4, false},
      {DataType::kUint32, 4, false}, {DataType::kInt64, 8, false},     {DataType::kUint64, 8, false},
      {DataType::kFloat16, 2, true}, {DataType::kBFloat16, 2, true},   {DataType::kFloat32, 4, true},
      {DataType::kFloat64, 8, true}, {DataType::kFloat8E4M3, 1, true}, {DataType::kFloat8E5M2, 1, true},
  };
  static_assert(sizeof(cases) / sizeof(cases[0]) == kDataTypeCount);
  for (const auto& c : cases) {
    EXPECT_TRUE(isValidDataType(c.dtype));
    EXPECT_EQ(dataTypeSize(c.dtype), c.size) << c.dtype;
    EXPECT_EQ(isFloatingPoint(c.dtype), c.floating) << c.dtype;
  }
  for (int bad : {-1, kDataTypeCount, 42}) {
    const auto dtype = static_cast<DataType>(bad);
    EXPECT_FALSE(isValidDataType(dtype));
    EXPECT_EQ(dataTypeSize(dtype), 0u) << bad;
    EXPECT_FALSE(isFloatingPoint(dtype));
    EXPECT_EQ(dataTypeName(dtype), "invalid");
  }
}

TEST(DataType, CanonicalNamesRoundTripAndAliasesParse) {
  std::set<std::string> names;
  for (int v = 0; v < kDataTypeCount; ++v) {
    const auto dtype = static_cast<DataType>(v);
    const std::string name(dataTypeName(dtype));
    names.insert(name);
    auto parsed = parseDataType(name);
    ASSERT_TRUE(parsed.isOk()) << name;
    EXPECT_EQ(*parsed, dtype);
    std::ostringstream out;
    out << dtype;
    EXPECT_EQ(out.str(), name);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kDataTypeCount));
  EXPECT_EQ(dataTypeName(DataType::kBFloat16), "bf16");
  EXPECT_EQ(dataTypeName(DataType::kFloat8E4M3), "fp8e4m3");
  EXPECT_EQ(dataTypeName(DataType::kFloat8E5M2), "fp8e5m2");
  // NCCL's and the C API's numbers.
  EXPECT_EQ(static_cast<int>(DataType::kFloat8E4M3), 10);
  EXPECT_EQ(static_cast<int>(DataType::kFloat8E5M2), 11);
  const struct {
    const char* alias;
    DataType dtype;
  } aliases[] = {{"char", DataType::kInt8},
                 {"int", DataType::kInt32},
                 {"uint", DataType::kUint32},
                 {"half", DataType::kFloat16},
                 {"float16", DataType::kFloat16},
                 {"bfloat16", DataType::kBFloat16},
                 {"float", DataType::kFloat32},
                 {"float32", DataType::kFloat32},
                 {"double", DataType::kFloat64},
                 {"float64", DataType::kFloat64},
                 {"float8e4m3", DataType::kFloat8E4M3},
                 {"float8_e4m3fn", DataType::kFloat8E4M3},
                 {"float8e5m2", DataType::kFloat8E5M2},
                 {"float8_e5m2", DataType::kFloat8E5M2}};
  for (const auto& a : aliases) {
    auto parsed = parseDataType(a.alias);
    ASSERT_TRUE(parsed.isOk()) << a.alias;
    EXPECT_EQ(*parsed, a.dtype) << a.alias;
  }
}

TEST(DataType, UnknownNameIsRejectedListingTheCanonicalNames) {
  for (const char* bad : {"", "FP32", "float128", "int16", "float8_e4m3fnuz"}) {
    auto parsed = parseDataType(bad);
    ASSERT_FALSE(parsed.isOk()) << bad;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("unknown dtype '" + std::string(bad) + "'"), std::string::npos);
    EXPECT_NE(parsed.status().message().find(
                  "int8, uint8, int32, uint32, int64, uint64, fp16, bf16, fp32, fp64, fp8e4m3, fp8e5m2"),
              std::string::npos)
        << parsed.status().message();
  }
}

TEST(ReduceOp, NamesRoundTripAndUnknownOnesAreRejected) {
  for (int v = 0; v < kReduceOpCount; ++v) {
    const auto op = static_cast<ReduceOp>(v);
    EXPECT_TRUE(isValidReduceOp(op));
    auto parsed = parseReduceOp(reduceOpName(op));
    ASSERT_TRUE(parsed.isOk()) << v;
    EXPECT_EQ(*parsed, op);
    std::ostringstream out;
    out << op;
    EXPECT_EQ(out.str(), reduceOpName(op));
  }
  EXPECT_EQ(reduceOpName(ReduceOp::kAvg), "avg");
  EXPECT_FALSE(isValidReduceOp(static_cast<ReduceOp>(kReduceOpCount)));
  EXPECT_FALSE(isValidReduceOp(static_cast<ReduceOp>(-1)));
  EXPECT_EQ(reduceOpName(static_cast<ReduceOp>(9)), "invalid");
  auto parsed = parseReduceOp("mean");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("unknown op 'mean'; expected one of sum, prod, min, max, avg"),
            std::string::npos)
      << parsed.status().message();
}

TEST(Algorithm, NamesRoundTripAndUnknownOnesAreRejected) {
  for (int v = 0; v < kAlgorithmCount; ++v) {
    const auto algorithm = static_cast<Algorithm>(v);
    EXPECT_TRUE(isValidAlgorithm(algorithm));
    auto parsed = parseAlgorithm(algorithmName(algorithm));
    ASSERT_TRUE(parsed.isOk()) << v;
    EXPECT_EQ(*parsed, algorithm);
    std::ostringstream out;
    out << algorithm;
    EXPECT_EQ(out.str(), algorithmName(algorithm));
  }
  EXPECT_EQ(algorithmName(Algorithm::kRecursiveDoubling), "recursive-doubling");
  EXPECT_FALSE(isValidAlgorithm(static_cast<Algorithm>(kAlgorithmCount)));
  EXPECT_FALSE(isValidAlgorithm(static_cast<Algorithm>(-3)));
  EXPECT_EQ(algorithmName(static_cast<Algorithm>(-3)), "invalid");
  auto parsed = parseAlgorithm("butterfly");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
  // The message lists every accepted name, in enum order.
  std::string expected = "unknown algorithm 'butterfly'; expected one of ";
  for (int v = 0; v < kAlgorithmCount; ++v) {
    expected += (v ? ", " : "") + std::string(algorithmName(static_cast<Algorithm>(v)));
  }
  EXPECT_EQ(parsed.status().message(), expected);
}

}  // namespace
}  // namespace peerreduce
