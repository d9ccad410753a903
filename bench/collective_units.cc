#include "collective_units.h"

#include <algorithm>
#include <cstring>

namespace peerreduce::bench {
namespace {

bool perRankBlocks(Collective collective) {
  return collective == Collective::kReduceScatter || collective == Collective::kAllGather;
}

std::size_t receivedElems(Collective collective, int ranks, std::size_t count) {
  return collective == Collective::kAllGather ? count * static_cast<std::size_t>(ranks) : count;
}

float decodeAt(const std::vector<unsigned char>& bytes, DataType dtype, std::size_t i) {
  float value;
  if (dtype == DataType::kBFloat16) {
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

float inputValue(int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13) % 9) - 4);
}

float expectedValue(Collective collective, int rank, int ranks, int root, std::size_t count, std::size_t j) {
  auto sumOver = [&](std::size_t i) {
    float sum = 0;
    for (int r = 0; r < ranks; ++r) sum += inputValue(r, i);
    return sum;
  };
  switch (collective) {
    case Collective::kAllReduce:
      return sumOver(j);
    case Collective::kReduceScatter:
      return sumOver(static_cast<std::size_t>(rank) * count + j);
    case Collective::kAllGather:
      return inputValue(static_cast<int>(j / count), j % count);
    case Collective::kBroadcast:
      return inputValue(root, j);
  }
  return 0;
}

std::vector<unsigned char> encodeInput(DataType dtype, int rank, std::size_t elems) {
  const std::size_t elem = dataTypeSize(dtype);
  std::vector<unsigned char> host(elems * elem);
  for (std::size_t i = 0; i < elems; ++i) {
    const float v = inputValue(rank, i);
    if (dtype == DataType::kBFloat16) {
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
    if (decodeAt(received, dtype, j) != expectedValue(collective, rank, ranks, root, count, j)) ++wrong;
  }
  return wrong;
}

}  // namespace peerreduce::bench
