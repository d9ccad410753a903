// peerreduce-sim reduce-scatter | all-gather | broadcast: the collective on simulated GPUs, checked as the
// allreduce is (cli_run.h): guards intact, inputs untouched where out of place, every rank's output equal
// to the independent reference (reduce-scatter: rank b's block is the reduction of block b of every input;
// all-gather: every input in rank order; broadcast: the root's input), exactly for the data movers.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "reference/reference.h"

namespace peerreduce::sim {
namespace {

// One rank's buffers, each with guard bands: [guard][data][guard].
struct RankBuffers {
  std::vector<unsigned char> send;
  std::vector<unsigned char> recv;  // empty when in place (the output is inside send, or send inside it)
};

std::vector<unsigned char> guarded(std::size_t bytes) {
  return std::vector<unsigned char>(bytes + 2 * kGuardBytes, kGuardByte);
}

// Elements of a rank's input and output buffers (in units of --count).
struct Shape {
  std::size_t send_blocks;
  std::size_t recv_blocks;
};

Shape shapeOf(Collective collective, int ranks) {
  const auto n = static_cast<std::size_t>(ranks);
  if (collective == Collective::kReduceScatter) return {n, 1};
  if (collective == Collective::kAllGather) return {1, n};
  return {1, 1};  // broadcast
}

}  // namespace

Status runCollective(RunReport& report) {
  const CliOptions& o = report.options;
  PR_ASSIGN_OR_RETURN(auto cluster, createRunCluster(report));
  const int n = o.ranks;
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::size_t block = o.count * elem;
  const Shape shape = shapeOf(o.collective, n);
  // In place (NCCL's forms): reduce-scatter's output is block `rank` of its input; all-gather's input is
  // block `rank` of its output; broadcast's output is its input. The larger buffer holds the data.
  const std::size_t big_blocks = std::max(shape.send_blocks, shape.recv_blocks);
  std::vector<RankBuffers> buffers(static_cast<std::size_t>(n));
  std::vector<std::vector<unsigned char>> inputs(static_cast<std::size_t>(n));  // pristine, for the reference
  for (int r = 0; r < n; ++r) {
    RankBuffers& b = buffers[static_cast<std::size_t>(r)];
    std::vector<unsigned char>& in = inputs[static_cast<std::size_t>(r)];
    in.resize(shape.send_blocks * block);
    testing::fillPayload(o.dtype, o.op, o.seed, r, in.data(), shape.send_blocks * o.count);
    b.send = guarded((o.in_place ? big_blocks : shape.send_blocks) * block);
    if (!o.in_place) b.recv = guarded(shape.recv_blocks * block);
    const std::size_t at =
        o.in_place && o.collective == Collective::kAllGather ? static_cast<std::size_t>(r) * block : 0;
    if (!in.empty()) std::memcpy(b.send.data() + kGuardBytes + at, in.data(), in.size());
  }
  // Where each rank's operation reads and writes.
  auto sendOf = [&](int r) -> unsigned char* {
    unsigned char* base = buffers[static_cast<std::size_t>(r)].send.data() + kGuardBytes;
    return o.in_place && o.collective == Collective::kAllGather ? base + static_cast<std::size_t>(r) * block : base;
  };
  auto recvOf = [&](int r) -> unsigned char* {
    if (!o.in_place) return buffers[static_cast<std::size_t>(r)].recv.data() + kGuardBytes;
    unsigned char* base = buffers[static_cast<std::size_t>(r)].send.data() + kGuardBytes;
    return o.collective == Collective::kReduceScatter ? base + static_cast<std::size_t>(r) * block : base;
  };
  for (int it = 0; it < o.iterations; ++it) {
    for (int r = 0; r < n; ++r) {
      if (it > 0 && o.in_place) {  // the previous iteration's output overwrote the input: restore it
        const auto& in = inputs[static_cast<std::size_t>(r)];
        if (!in.empty()) std::memcpy(sendOf(r), in.data(), in.size());
      }
      Communicator& comm = cluster->comm(r);
      if (o.collective == Collective::kReduceScatter) {
        PR_RETURN_IF_ERROR(comm.reduceScatter(sendOf(r), recvOf(r), o.count, o.dtype, o.op));
      } else if (o.collective == Collective::kAllGather) {
        PR_RETURN_IF_ERROR(comm.allGather(sendOf(r), recvOf(r), o.count, o.dtype));
      } else {
        PR_RETURN_IF_ERROR(comm.broadcast(sendOf(r), recvOf(r), o.count, o.dtype, o.root));
      }
    }
    // One iteration at a time, so an in-place input can be restored between them.
    if (o.in_place) PR_RETURN_IF_ERROR(cluster->runUntilIdle());
  }
  PR_RETURN_IF_ERROR(cluster->runUntilIdle());
  PR_RETURN_IF_ERROR(collectRunStats(*cluster, report));

  std::vector<const void*> ins;
  for (const auto& in : inputs) ins.push_back(in.data());
  const std::size_t out_bytes = shape.recv_blocks * block;
  for (int r = 0; r < n; ++r) {
    const RankBuffers& b = buffers[static_cast<std::size_t>(r)];
    if (guardsBroken(b.send) || guardsBroken(b.recv)) {
      fail(report, "rank " + std::to_string(r) + " wrote outside its buffer");
    }
    const auto& in = inputs[static_cast<std::size_t>(r)];
    if (!o.in_place && !in.empty() && std::memcmp(sendOf(r), in.data(), in.size()) != 0) {
      fail(report, "rank " + std::to_string(r) + "'s send buffer was modified");
    }
    if (o.count == 0) continue;
    std::string problem;
    if (o.collective == Collective::kReduceScatter) {
      const auto reference = testing::referenceReduceScatter(o.dtype, o.op, ins, o.count, r);
      problem = testing::compareToReference(o.dtype, o.op, reference, recvOf(r), o.count);
    } else if (o.collective == Collective::kAllGather) {
      problem = testing::compareExactly(o.dtype, testing::referenceAllGather(o.dtype, ins, o.count), recvOf(r));
    } else {
      problem = testing::compareExactly(o.dtype, testing::referenceBroadcast(o.dtype, ins, o.count, o.root), recvOf(r));
    }
    if (!problem.empty()) {
      if (report.reference_problem.empty()) report.reference_problem = "rank " + std::to_string(r) + ": " + problem;
      fail(report, "result differs from the reference: " + report.reference_problem);
    }
    // The data movers give every rank the same bytes; reduce-scatter's blocks differ by rank.
    if (o.collective != Collective::kReduceScatter && std::memcmp(recvOf(r), recvOf(0), out_bytes) != 0) {
      report.ranks_agree = false;
      fail(report, "rank " + std::to_string(r) + "'s result differs from rank 0's bits");
    }
  }
  if (!report.races.empty()) fail(report, "happens-before violation: " + report.races.front());
  return Status::ok();
}

}  // namespace peerreduce::sim
