#include "collective_case.h"

#include <cstring>
#include <memory>
#include <vector>

#include "reference/reference.h"
#include "util/hash.h"

namespace peerreduce::testing {
namespace {

constexpr unsigned char kCollectiveCaseGuard = 0xA5;      // fills bytes the call must not touch
constexpr std::size_t kCollectiveCaseGuardElements = 16;  // untouched elements checked after each buffer

bool inputHoldsEveryBlock(const CollectiveCase& c) { return c.collective == Collective::kReduceScatter; }
bool outputHoldsEveryBlock(const CollectiveCase& c) { return c.collective == Collective::kAllGather; }

// One case's buffers on one local rank. In place there is one buffer (`send`), holding the larger of
// the two layouts; `send_at` / `recv_at` are the pointers' element offsets into their buffers.
struct CollectiveBuffers {
  int rank = 0;
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;  // null in place
  std::vector<unsigned char> send_image;
  std::vector<unsigned char> recv_image;
  std::size_t send_at = 0;
  std::size_t recv_at = 0;
};

struct CollectiveCaseState {
  const CollectiveCase* c = nullptr;
  std::vector<std::vector<unsigned char>> inputs;  // every rank's send payload
  std::vector<CollectiveBuffers> locals;
  CaseOutcome outcome;

  void fail(const std::string& problem) {
    if (outcome.ok) {
      outcome.ok = false;
      outcome.problem = problem + " [" + c->describe() + "]";
    }
  }
};

Status submitCollective(TestWorld& world, const CollectiveCase& c, int rank, const void* send, void* recv) {
  Communicator& comm = world.comm(rank);
  switch (c.collective) {
    case Collective::kReduceScatter:
      return comm.reduceScatter(send, recv, c.count, c.dtype, c.op, world.stream(rank));
    case Collective::kAllGather:
      return comm.allGather(send, recv, c.count, c.dtype, world.stream(rank));
    case Collective::kBroadcast:
      return comm.broadcast(send, recv, c.count, c.dtype, c.root, world.stream(rank));
    case Collective::kAllReduce:
      break;
  }
  return invalidArgumentError("collective_case runs reduce-scatter, all-gather and broadcast");
}

void prepareCollective(TestWorld& world, CollectiveCaseState& state) {
  const CollectiveCase& c = *state.c;
  const std::size_t elem = dataTypeSize(c.dtype);
  const std::size_t n = static_cast<std::size_t>(world.size());
  const std::size_t in_count = inputHoldsEveryBlock(c) ? n * c.count : c.count;
  const std::size_t out_count = outputHoldsEveryBlock(c) ? n * c.count : c.count;
  state.inputs.assign(n, std::vector<unsigned char>(in_count * elem));
  for (std::size_t r = 0; r < n; ++r) {
    fillPayload(c.dtype, c.op, c.seed, static_cast<int>(r), state.inputs[r].data(), in_count, c.payload);
  }
  for (int r : world.localRanks()) {
    CollectiveBuffers local;
    local.rank = r;
    const std::size_t own_block = static_cast<std::size_t>(r) * c.count;
    const std::vector<unsigned char>& payload = state.inputs[static_cast<std::size_t>(r)];
    if (c.in_place && c.collective == Collective::kAllGather) {
      // One buffer laid out as the output; the input is the rank's block of it.
      local.send_image.assign((c.recv_offset + out_count + kCollectiveCaseGuardElements) * elem, kCollectiveCaseGuard);
      local.recv_at = c.recv_offset;
      local.send_at = c.recv_offset + own_block;
    } else {
      local.send_image.assign((c.send_offset + in_count + kCollectiveCaseGuardElements) * elem, kCollectiveCaseGuard);
      local.send_at = c.send_offset;
      local.recv_at = c.in_place && c.collective == Collective::kReduceScatter ? c.send_offset + own_block
                      : c.in_place                                             ? c.send_offset
                                                                               : c.recv_offset;
    }
    if (!payload.empty()) std::memcpy(local.send_image.data() + local.send_at * elem, payload.data(), payload.size());
    local.send = world.allocate(local.send_image.size());
    local.send->upload(local.send_image.data(), 0, local.send_image.size());
    if (!c.in_place) {
      local.recv_image.assign((c.recv_offset + out_count + kCollectiveCaseGuardElements) * elem, kCollectiveCaseGuard);
      local.recv = world.allocate(local.recv_image.size());
      local.recv->upload(local.recv_image.data(), 0, local.recv_image.size());
    }
    state.locals.push_back(std::move(local));
  }
  for (auto& local : state.locals) {
    auto* base = static_cast<unsigned char*>(local.send->data());
    auto* recv_base = c.in_place ? base : static_cast<unsigned char*>(local.recv->data());
    const Status s =
        submitCollective(world, c, local.rank, base + local.send_at * elem, recv_base + local.recv_at * elem);
    if (!s.isOk()) state.fail("rank " + std::to_string(local.rank) + ": " + s.toString());
  }
}

void checkCollective(CollectiveCaseState& state) {
  const CollectiveCase& c = *state.c;
  const std::size_t elem = dataTypeSize(c.dtype);
  const std::size_t n = state.inputs.size();
  const std::size_t out_bytes = (outputHoldsEveryBlock(c) ? n * c.count : c.count) * elem;
  std::vector<const void*> ins;
  for (const auto& in : state.inputs) ins.push_back(in.data());
  std::vector<std::uint8_t> copied;  // the copying collectives: what every rank receives
  if (c.count > 0 && c.collective == Collective::kAllGather) copied = referenceAllGather(c.dtype, ins, c.count);
  if (c.count > 0 && c.collective == Collective::kBroadcast) copied = referenceBroadcast(c.dtype, ins, c.count, c.root);
  Fnv1a hash;
  for (auto& local : state.locals) {
    if (!state.outcome.ok) break;
    const std::string who = "rank " + std::to_string(local.rank) + ": ";
    std::vector<unsigned char> send_after(local.send_image.size()), recv_after;
    local.send->download(send_after.data(), 0, send_after.size());
    std::vector<unsigned char>* out_image = &send_after;
    const std::vector<unsigned char>* before = &local.send_image;
    if (!c.in_place) {
      recv_after.resize(local.recv_image.size());
      local.recv->download(recv_after.data(), 0, recv_after.size());
      if (send_after != local.send_image) state.fail(who + "the send buffer was modified");
      out_image = &recv_after;
      before = &local.recv_image;
    }
    const std::size_t out_begin = local.recv_at * elem;
    if (std::memcmp(out_image->data(), before->data(), out_begin) != 0 ||
        std::memcmp(out_image->data() + out_begin + out_bytes, before->data() + out_begin + out_bytes,
                    out_image->size() - out_begin - out_bytes) != 0) {
      state.fail(who + "bytes outside the output range were written");
    }
    const unsigned char* output = out_image->data() + out_begin;
    if (c.count == 0) continue;
    const std::string problem =
        c.collective == Collective::kReduceScatter
            ? compareToReference(c.dtype, c.op, referenceReduceScatter(c.dtype, c.op, ins, c.count, local.rank), output,
                                 c.count)
            : compareExactly(c.dtype, copied, output);
    if (!problem.empty()) state.fail(who + "differs from the reference: " + problem);
    // Every rank of a copying collective receives the same bits; a reduce-scatter's blocks differ, and
    // the hash of all of them in rank order is what a rerun must reproduce.
    if (c.collective != Collective::kReduceScatter && std::memcmp(output, copied.data(), out_bytes) != 0) {
      state.fail(who + "bits differ from the source's");
    }
    hash.addBytes(output, out_bytes);
  }
  state.outcome.result_hash = hash.value();
}

}  // namespace

std::string CollectiveCase::describe() const {
  return std::string(collectiveName(collective)) + ", world " + std::to_string(world_size) + ", count " +
         std::to_string(count) + ", " + std::string(dataTypeName(dtype)) +
         (collective == Collective::kReduceScatter ? " " + std::string(reduceOpName(op)) : std::string()) +
         (collective == Collective::kBroadcast ? ", root " + std::to_string(root) : std::string()) + ", " +
         std::string(algorithmName(algorithm)) + (in_place ? ", in place" : ", out of place") + ", offsets " +
         std::to_string(send_offset) + "/" + std::to_string(recv_offset) + ", seed " + std::to_string(seed) +
         (payload == Payload::kLarge ? ", large values" : "");
}

std::vector<CaseOutcome> runCollectiveCases(TestWorld& world, const std::vector<CollectiveCase>& cases) {
  std::vector<CollectiveCaseState> states(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    states[i].c = &cases[i];
    prepareCollective(world, states[i]);
  }
  const Status completed = world.completeAll();
  std::vector<std::string> races;
  if (sim::SimWorld* sim = world.simWorld()) races = sim->raceReports();
  std::vector<CaseOutcome> outcomes;
  for (auto& state : states) {
    if (!completed.isOk()) state.fail("completing: " + completed.toString());
    checkCollective(state);
    if (!races.empty()) state.fail("happens-before violation: " + races.front());
    // Collective verdict: every rank calls it for every case, whatever its local outcome.
    if (!world.allRanksAgree(state.outcome.ok) && state.outcome.ok) {
      state.outcome.ok = false;
      state.outcome.problem = "another rank failed [" + state.c->describe() + "]";
    }
    outcomes.push_back(state.outcome);
  }
  return outcomes;
}

CaseOutcome runCollectiveCase(TestWorld& world, const CollectiveCase& c) {
  return runCollectiveCases(world, {c}).front();
}

}  // namespace peerreduce::testing
