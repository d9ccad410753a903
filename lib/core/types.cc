#include "peerreduce/types.h"

#include <array>
#include <ostream>
#include <string>

namespace peerreduce {
namespace {

struct NamedDataType {
  std::string_view name;
  DataType dtype;
};

// Canonical names first (index = enum value), then aliases accepted by the parsers.
// The fp8 aliases are NCCL's names (ncclFloat8e4m3) and torch's (torch.float8_e4m3fn).
constexpr std::array<NamedDataType, 26> kDataTypeNames = {{
    {"int8", DataType::kInt8},
    {"uint8", DataType::kUint8},
    {"int32", DataType::kInt32},
    {"uint32", DataType::kUint32},
    {"int64", DataType::kInt64},
    {"uint64", DataType::kUint64},
    {"fp16", DataType::kFloat16},
    {"bf16", DataType::kBFloat16},
    {"fp32", DataType::kFloat32},
    {"fp64", DataType::kFloat64},
    {"fp8e4m3", DataType::kFloat8E4M3},
    {"fp8e5m2", DataType::kFloat8E5M2},
    {"char", DataType::kInt8},
    {"int", DataType::kInt32},
    {"half", DataType::kFloat16},
    {"float16", DataType::kFloat16},
    {"bfloat16", DataType::kBFloat16},
    {"float", DataType::kFloat32},
    {"float32", DataType::kFloat32},
    {"double", DataType::kFloat64},
    {"float64", DataType::kFloat64},
    {"uint", DataType::kUint32},
    {"float8e4m3", DataType::kFloat8E4M3},
    {"float8_e4m3fn", DataType::kFloat8E4M3},
    {"float8e5m2", DataType::kFloat8E5M2},
    {"float8_e5m2", DataType::kFloat8E5M2},
}};

constexpr bool canonicalNamesFollowTheEnum() {
  for (int i = 0; i < kDataTypeCount; ++i) {
    if (static_cast<int>(kDataTypeNames[static_cast<std::size_t>(i)].dtype) != i) return false;
  }
  return true;
}
static_assert(canonicalNamesFollowTheEnum(), "kDataTypeNames must start with every DataType in value order");

constexpr std::array<std::string_view, kReduceOpCount> kReduceOpNames = {"sum", "prod", "min", "max", "avg"};
constexpr std::array<std::string_view, kAlgorithmCount> kAlgorithmNames = {
    "auto", "one-shot", "two-shot", "ring", "recursive-doubling", "rabenseifner", "tree", "copy-engine-two-shot",
    "user"};
constexpr std::array<std::string_view, kCollectiveCount> kCollectiveNames = {"allreduce", "reduce-scatter",
                                                                             "all-gather", "broadcast"};

std::string joinNames(const std::string_view* names, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

bool isValidDataType(DataType dtype) {
  const int v = static_cast<int>(dtype);
  return v >= 0 && v < kDataTypeCount;
}
bool isValidReduceOp(ReduceOp op) {
  const int v = static_cast<int>(op);
  return v >= 0 && v < kReduceOpCount;
}
bool isValidAlgorithm(Algorithm algorithm) {
  const int v = static_cast<int>(algorithm);
  return v >= 0 && v < kAlgorithmCount;
}

bool isValidCollective(Collective collective) {
  const int v = static_cast<int>(collective);
  return v >= 0 && v < kCollectiveCount;
}

std::size_t dataTypeSize(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 0;
}

bool isFloatingPoint(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 || dtype == DataType::kFloat32 ||
         dtype == DataType::kFloat64 || dtype == DataType::kFloat8E4M3 || dtype == DataType::kFloat8E5M2;
}

std::string_view dataTypeName(DataType dtype) {
  return isValidDataType(dtype) ? kDataTypeNames[static_cast<std::size_t>(dtype)].name : "invalid";
}
std::string_view reduceOpName(ReduceOp op) {
  return isValidReduceOp(op) ? kReduceOpNames[static_cast<std::size_t>(op)] : "invalid";
}
std::string_view algorithmName(Algorithm algorithm) {
  return isValidAlgorithm(algorithm) ? kAlgorithmNames[static_cast<std::size_t>(algorithm)] : "invalid";
}

std::string_view collectiveName(Collective collective) {
  return isValidCollective(collective) ? kCollectiveNames[static_cast<std::size_t>(collective)] : "invalid";
}

StatusOr<DataType> parseDataType(std::string_view text) {
  for (const auto& entry : kDataTypeNames) {
    if (entry.name == text) return entry.dtype;
  }
  std::array<std::string_view, kDataTypeCount> canonical{};
  for (int i = 0; i < kDataTypeCount; ++i)
    canonical[static_cast<std::size_t>(i)] = kDataTypeNames[static_cast<std::size_t>(i)].name;
  return invalidArgumentError("unknown dtype '" + std::string(text) + "'; expected one of " +
                              joinNames(canonical.data(), canonical.size()));
}

StatusOr<ReduceOp> parseReduceOp(std::string_view text) {
  for (std::size_t i = 0; i < kReduceOpNames.size(); ++i) {
    if (kReduceOpNames[i] == text) return static_cast<ReduceOp>(i);
  }
  return invalidArgumentError("unknown op '" + std::string(text) + "'; expected one of " +
                              joinNames(kReduceOpNames.data(), kReduceOpNames.size()));
}

StatusOr<Algorithm> parseAlgorithm(std::string_view text) {
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (kAlgorithmNames[i] == text) return static_cast<Algorithm>(i);
  }
  return invalidArgumentError("unknown algorithm '" + std::string(text) + "'; expected one of " +
                              joinNames(kAlgorithmNames.data(), kAlgorithmNames.size()));
}

StatusOr<Collective> parseCollective(std::string_view text) {
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i) {
    if (kCollectiveNames[i] == text) return static_cast<Collective>(i);
  }
  return invalidArgumentError("unknown collective '" + std::string(text) + "'; expected one of " +
                              joinNames(kCollectiveNames.data(), kCollectiveNames.size()));
}

std::ostream& operator<<(std::ostream& out, DataType dtype) { return out << dataTypeName(dtype); }
std::ostream& operator<<(std::ostream& out, ReduceOp op) { return out << reduceOpName(op); }
std::ostream& operator<<(std::ostream& out, Algorithm algorithm) { return out << algorithmName(algorithm); }
std::ostream& operator<<(std::ostream& out, Collective collective) { return out << collectiveName(collective); }

}  // namespace peerreduce
