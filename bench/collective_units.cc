#include "collective_units.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace peerreduce::bench {
namespace {

bool perRankBlocks(Collective collective) {
  return collective == Collective::kReduceScatter || collective == Collective::kAllGather;
}

std::size_t receivedElems(Collective collective, int ranks, std::size_t count) {
  return collective == Collective::kAllGather ? count * static_cast<std::size_t>(ranks) : count;
}

// The 8-bit floats' bits of the integers -4..4 (index: value + 4), the only values their inputs and results
// take: e4m3 (bias 7, 3 mantissa bits) and e5m2 (bias 15, 2 mantissa bits).
constexpr int kSmallestInput = -4;
constexpr std::uint8_t kE4M3Integers[] = {0xc8, 0xc4, 0xc0, 0xb8, 0x00, 0x38, 0x40, 0x44, 0x48};
constexpr std::uint8_t kE5M2Integers[] = {0xc4, 0xc2, 0xc0, 0xbc, 0x00, 0x3c, 0x40, 0x42, 0x44};

bool isFloat8(DataType dtype) { return dtype == DataType::kFloat8E4M3 || dtype == DataType::kFloat8E5M2; }

const std::uint8_t* float8Integers(DataType dtype) {
  return dtype == DataType::kFloat8E4M3 ? kE4M3Integers : kE5M2Integers;
}

// fp16's bits of a whole number of magnitude below 2048 (the inputs, and their sums over up to 64 ranks, are
// such numbers: exact in fp16's 11 significant bits), and back: the benchmark checks values, so it needs
// no general conversion, and a pattern it does not expect decodes to NaN.
std::uint16_t halfBitsOfWholeNumber(float v) {
  if (v == 0.0f) return 0;
  const std::uint16_t sign = v < 0 ? 0x8000 : 0;
  const auto magnitude = static_cast<std::uint32_t>(std::fabs(v));
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;
  const std::uint32_t mantissa = ((magnitude << 10) >> exponent) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(exponent + 15) << 10 | mantissa);
}

float wholeNumberOfHalfBits(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const float sign = (bits & 0x8000) != 0 ? -1.0f : 1.0f;
  if (exponent == 0) return (bits & 0x3ff) == 0 ? sign * 0.0f : std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0x1f) return std::numeric_limits<float>::quiet_NaN();
  return sign * std::ldexp(1.0f + static_cast<float>(bits & 0x3ff) / 1024.0f, exponent - 15);
}

// An 8-bit float the inputs can produce decoded, anything else NaN (which equals no expected value).
float decodeFloat8(DataType dtype, std::uint8_t bits) {
  const std::uint8_t* integers = float8Integers(dtype);
  for (int k = 0; k < static_cast<int>(sizeof(kE4M3Integers)); ++k) {
    if (integers[k] == bits) return static_cast<float>(k + kSmallestInput);
  }
  return std::numeric_limits<float>::quiet_NaN();
}

float decodeAt(const std::vector<unsigned char>& bytes, DataType dtype, std::size_t i) {
  float value;
  if (isFloat8(dtype)) {
    value = decodeFloat8(dtype, bytes[i]);
  } else if (dtype == DataType::kFloat16) {
    std::uint16_t half;
    std::memcpy(&half, bytes.data() + i * 2, 2);
    value = wholeNumberOfHalfBits(half);
  } else if (dtype == DataType::kBFloat16) {
    std::uint16_t half;
    std::memcpy(&half, bytes.data() + i * 2, 2);
    const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
    std::memcpy(&value, &bits, 4);
  } else {
    std::memcpy(&value, bytes.data() + i * 4, 4);
  }
  return value;
}

}  // namespace

std::size_t reportedBytes(Collective collective, std::size_t count, int ranks, std::size_t elem) {
  return (perRankBlocks(collective) ? count * static_cast<std::size_t>(ranks) : count) * elem;
}

std::size_t countForBytes(Collective collective, std::size_t bytes, int ranks, std::size_t elem) {
  if (elem == 0 || ranks < 1) return 0;
  return perRankBlocks(collective) ? bytes / elem / static_cast<std::size_t>(ranks) : bytes / elem;
}

double busBandwidthFactor(Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return (n - 1) / n;
    case Collective::kBroadcast:
      return 1.0;
  }
  return 0.0;
}

Placement placementOf(Collective collective, bool in_place, int rank, int ranks, std::size_t count, std::size_t elem) {
  Placement p;
  const std::size_t own_block = static_cast<std::size_t>(rank) * count * elem;
  p.send_elems = collective == Collective::kReduceScatter ? count * static_cast<std::size_t>(ranks) : count;
  p.recv_elems = receivedElems(collective, ranks, count);
  if (!in_place) return p;
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
      p.recv_in = Allocation::kSend;  // one buffer
      break;
    case Collective::kReduceScatter:
      p.recv_in = Allocation::kSend;  // the rank's block of the send buffer
      p.recv_offset = own_block;
      break;
    case Collective::kAllGather:
      p.send_in = Allocation::kRecv;  // the rank's block of the receive buffer
      p.send_offset = own_block;
      break;
  }
  return p;
}

bool readsInput(Collective collective, int rank, int root) {
  return collective != Collective::kBroadcast || rank == root;
}

float inputValue(DataType dtype, int rank, int ranks, std::size_t i) {
  if (isFloat8(dtype) && static_cast<std::size_t>(rank) != i % static_cast<std::size_t>(ranks)) return 0.0f;
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13) % 9) + kSmallestInput);
}

float expectedValue(DataType dtype, Collective collective, int rank, int ranks, int root, std::size_t count,
                    std::size_t j) {
  auto sumOver = [&](std::size_t i) {
    float sum = 0;
    for (int r = 0; r < ranks; ++r) sum += inputValue(dtype, r, ranks, i);
    return sum;
  };
  switch (collective) {
    case Collective::kAllReduce:
      return sumOver(j);
    case Collective::kReduceScatter:
      return sumOver(static_cast<std::size_t>(rank) * count + j);
    case Collective::kAllGather:
      return inputValue(dtype, static_cast<int>(j / count), ranks, j % count);
    case Collective::kBroadcast:
      return inputValue(dtype, root, ranks, j);
  }
  return 0;
}

bool benchmarkedType(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 || isFloat8(dtype);
}

std::vector<unsigned char> encodeInput(DataType dtype, int rank, int ranks, std::size_t elems) {
  const std::size_t elem = dataTypeSize(dtype);
  std::vector<unsigned char> host(elems * elem);
  for (std::size_t i = 0; i < elems; ++i) {
    const float v = inputValue(dtype, rank, ranks, i);
    if (isFloat8(dtype)) {
      host[i] = float8Integers(dtype)[static_cast<int>(v) - kSmallestInput];
    } else if (dtype == DataType::kFloat16) {
      const std::uint16_t h = halfBitsOfWholeNumber(v);
      std::memcpy(host.data() + i * elem, &h, sizeof(h));
    } else if (dtype == DataType::kBFloat16) {
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      const auto b = static_cast<std::uint16_t>(bits >> 16);  // exact: small integers fit bf16
      std::memcpy(host.data() + i * elem, &b, sizeof(b));
    } else {
      std::memcpy(host.data() + i * elem, &v, sizeof(v));
    }
  }
  return host;
}

long long countWrong(const std::vector<unsigned char>& received, DataType dtype, Collective collective, int rank,
                     int ranks, int root, std::size_t count) {
  const std::size_t elems = receivedElems(collective, ranks, count);
  const std::size_t elem = dataTypeSize(dtype);
  // Elements missing from a short download count as wrong: they were never checked.
  const std::size_t present = elem == 0 ? 0 : std::min(elems, received.size() / elem);
  long long wrong = static_cast<long long>(elems - present);
  for (std::size_t j = 0; j < present; ++j) {
    if (decodeAt(received, dtype, j) != expectedValue(dtype, collective, rank, ranks, root, count, j)) ++wrong;
  }
  return wrong;
}

}  // namespace peerreduce::bench
