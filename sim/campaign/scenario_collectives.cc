#include "scenario_collectives.h"

#include "prng.h"

namespace peerreduce::sim::campaign {

void drawCollectives(Scenario& scenario) {
  constexpr std::uint64_t kCollectiveStream = 0xc011ec7;
  Prng prng(deriveSeed(scenario.seed, kCollectiveStream));
  constexpr Collective kOthers[] = {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast};
  for (ScenarioOp& op : scenario.ops) {
    op.collective = prng.chance(0.5) ? Collective::kAllReduce : kOthers[prng.below(3)];
    op.root = static_cast<int>(prng.below(static_cast<std::uint64_t>(scenario.ranks)));
  }
}

std::size_t sendBytes(const ScenarioOp& op, int n) {
  const std::size_t block = op.count * dataTypeSize(op.dtype);
  return op.collective == Collective::kReduceScatter ? block * static_cast<std::size_t>(n) : block;
}

std::size_t recvBytes(const ScenarioOp& op, int n) {
  const std::size_t block = op.count * dataTypeSize(op.dtype);
  return op.collective == Collective::kAllGather ? block * static_cast<std::size_t>(n) : block;
}

int rootIn(const ScenarioOp& op, int n) { return op.root % n; }

Status submitCollective(Communicator& comm, const ScenarioOp& op, int n, const std::byte* send, std::byte* recv) {
  switch (op.collective) {
    case Collective::kReduceScatter:
      return comm.reduceScatter(send, recv, op.count, op.dtype, op.op);
    case Collective::kAllGather:
      return comm.allGather(send, recv, op.count, op.dtype);
    case Collective::kBroadcast:
      return comm.broadcast(send, recv, op.count, op.dtype, rootIn(op, n));
    case Collective::kAllReduce:
      break;
  }
  return comm.allreduce(send, recv, op.count, op.dtype, op.op);
}

std::vector<std::byte> expectedOutput(const ScenarioOp& op, const std::vector<std::vector<std::byte>>& inputs, int r,
                                      std::vector<std::byte> (*reduce)(const ScenarioOp&, std::size_t,
                                                                       const std::vector<std::vector<std::byte>>&)) {
  const int n = static_cast<int>(inputs.size());
  const std::size_t block = op.count * dataTypeSize(op.dtype);
  switch (op.collective) {
    case Collective::kReduceScatter: {
      const std::vector<std::byte> all = reduce(op, op.count * static_cast<std::size_t>(n), inputs);
      const auto first = all.begin() + static_cast<std::ptrdiff_t>(block * static_cast<std::size_t>(r));
      return std::vector<std::byte>(first, first + static_cast<std::ptrdiff_t>(block));
    }
    case Collective::kAllGather: {
      std::vector<std::byte> out;
      for (const auto& input : inputs) out.insert(out.end(), input.begin(), input.end());
      return out;
    }
    case Collective::kBroadcast:
      return inputs[static_cast<std::size_t>(rootIn(op, n))];
    case Collective::kAllReduce:
      break;
  }
  return reduce(op, op.count, inputs);
}

}  // namespace peerreduce::sim::campaign
