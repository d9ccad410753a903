#include "allreduce_case.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "reference/reference.h"
#include "util/hash.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

std::atomic<std::uint64_t> g_cases{0};
constexpr unsigned char kAllreduceCaseGuard = 0x5A;      // fills bytes the allreduce must not touch
constexpr std::size_t kAllreduceCaseGuardElements = 16;  // untouched elements checked after each buffer

}  // namespace

std::string AllreduceCase::describe() const {
  return "world " + std::to_string(world_size) + ", count " + std::to_string(count) + ", " +
         std::string(dataTypeName(dtype)) + " " + std::string(reduceOpName(op)) + ", " +
         std::string(algorithmName(algorithm)) + (in_place ? ", in place" : ", out of place") + ", offsets " +
         std::to_string(send_offset) + "/" + std::to_string(recv_offset) + ", seed " + std::to_string(seed) +
         (payload == Payload::kLarge ? ", large values" : "");
}

std::uint64_t allreduceCasesRun() { return g_cases.load(); }

namespace {

// One case's buffers on one local rank.
struct LocalBuffers {
  int rank = 0;
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;
  std::vector<unsigned char> send_image;  // expected contents of the whole send buffer
  std::vector<unsigned char> recv_image;  // contents of the receive buffer before the call
};

struct CaseState {
  const AllreduceCase* c = nullptr;
  std::vector<std::vector<unsigned char>> inputs;  // every rank's payload
  std::vector<LocalBuffers> locals;
  CaseOutcome outcome;

  void fail(const std::string& problem) {
    if (outcome.ok) {
      outcome.ok = false;
      outcome.problem = problem + " [" + c->describe() + "]";
    }
  }
};

void prepareAndEnqueue(TestWorld& world, CaseState& state) {
  const AllreduceCase& c = *state.c;
  const std::size_t elem = dataTypeSize(c.dtype);
  const std::size_t bytes = c.count * elem;
  const int n = world.size();
  state.inputs.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(bytes));
  for (int r = 0; r < n; ++r)
    fillPayload(c.dtype, c.op, c.seed, r, state.inputs[static_cast<std::size_t>(r)].data(), c.count, c.payload);
  const std::size_t send_total = (c.send_offset + c.count + kAllreduceCaseGuardElements) * elem;
  const std::size_t recv_total = (c.recv_offset + c.count + kAllreduceCaseGuardElements) * elem;
  for (int r : world.localRanks()) {
    LocalBuffers local;
    local.rank = r;
    local.send_image.assign(send_total, kAllreduceCaseGuard);
    if (bytes) {
      std::memcpy(local.send_image.data() + c.send_offset * elem, state.inputs[static_cast<std::size_t>(r)].data(),
                  bytes);
    }
    local.send = world.allocate(send_total);
    local.send->upload(local.send_image.data(), 0, send_total);
    if (!c.in_place) {
      local.recv_image.assign(recv_total, kAllreduceCaseGuard);
      local.recv = world.allocate(recv_total);
      local.recv->upload(local.recv_image.data(), 0, recv_total);
    }
    state.locals.push_back(std::move(local));
  }
  for (auto& local : state.locals) {
    auto* send = static_cast<unsigned char*>(local.send->data()) + c.send_offset * elem;
    void* recv =
        c.in_place ? static_cast<void*>(send) : static_cast<unsigned char*>(local.recv->data()) + c.recv_offset * elem;
    const Status s = world.comm(local.rank).allreduce(send, recv, c.count, c.dtype, c.op, world.stream(local.rank));
    if (!s.isOk()) state.fail("rank " + std::to_string(local.rank) + " allreduce: " + s.toString());
  }
}

void checkLocal(CaseState& state) {
  const AllreduceCase& c = *state.c;
  const std::size_t elem = dataTypeSize(c.dtype);
  const std::size_t bytes = c.count * elem;
  ReferenceResult reference;
  if (state.outcome.ok && c.count > 0) {
    std::vector<const void*> ins;
    for (const auto& in : state.inputs) ins.push_back(in.data());
    reference = referenceReduce(c.dtype, c.op, ins, c.count);
  }
  std::vector<unsigned char> first_output;
  for (auto& local : state.locals) {
    if (!state.outcome.ok) break;
    const std::string who = "rank " + std::to_string(local.rank) + ": ";
    std::vector<unsigned char> send_after(local.send_image.size()), recv_after;
    local.send->download(send_after.data(), 0, send_after.size());
    std::vector<unsigned char>* out_image = &send_after;
    std::size_t out_offset = c.send_offset;
    if (!c.in_place) {
      recv_after.resize(local.recv_image.size());
      local.recv->download(recv_after.data(), 0, recv_after.size());
      if (send_after != local.send_image) state.fail(who + "the send buffer was modified");
      out_image = &recv_after;
      out_offset = c.recv_offset;
    }
    const std::vector<unsigned char>& before = c.in_place ? local.send_image : local.recv_image;
    const std::size_t out_begin = out_offset * elem;
    if (std::memcmp(out_image->data(), before.data(), out_begin) != 0 ||
        std::memcmp(out_image->data() + out_begin + bytes, before.data() + out_begin + bytes,
                    out_image->size() - out_begin - bytes) != 0) {
      state.fail(who + "bytes outside the output range were written");
    }
    const unsigned char* output = out_image->data() + out_begin;
    if (c.count > 0) {
      const std::string problem = compareToReference(c.dtype, c.op, reference, output, c.count);
      if (!problem.empty()) state.fail(who + "differs from the reference: " + problem);
    }
    if (first_output.empty()) {
      first_output.assign(output, output + bytes);
      Fnv1a hash;
      hash.addBytes(output, bytes);
      state.outcome.result_hash = hash.value();
    } else if (bytes && std::memcmp(first_output.data(), output, bytes) != 0) {
      state.fail(who + "bits differ from rank " + std::to_string(state.locals.front().rank) + "'s");
    }
  }
}

}  // namespace

// On hardware: the simulator's bits for the same case, algorithm and scratch (so the same plan and
// segments) must equal the GPU's. Returns "" when they do.
std::string compareWithSimulator(TestWorld& world, const AllreduceCase& c, const CaseOutcome& hardware) {
  if (c.count == 0 || !hardware.ok) return "";
  Communicator& comm = world.comm(world.localRanks().front());
  auto selection = comm.explainSelection(c.count, c.dtype);
  if (!selection.isOk()) return "explainSelection: " + selection.status().toString();
  Config config = comm.config();
  // A plan file is never forced: the same settings (the file and its size range) choose it there too.
  if (selection->chosen != Algorithm::kUser) config.algorithm = selection->chosen;
  sim::SimOptions options;
  options.seed = c.seed;
  auto sim = makeSimTestWorld(world.size(), options, config);
  if (!sim.isOk()) return "simulated world: " + sim.status().toString();
  const CaseOutcome simulated = runAllreduceCases(**sim, {c}).front();
  if (!simulated.ok) return "the simulator failed the same case: " + simulated.problem;
  if (simulated.result_hash != hardware.result_hash) {
    return "GPU bits differ from the simulator's for " + std::string(algorithmName(selection->chosen));
  }
  return "";
}

std::vector<CaseOutcome> runAllreduceCases(TestWorld& world, const std::vector<AllreduceCase>& cases) {
  std::vector<CaseState> states(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    g_cases.fetch_add(1);
    states[i].c = &cases[i];
    prepareAndEnqueue(world, states[i]);
  }
  const Status completed = world.completeAll();
  std::vector<std::string> races;
  if (sim::SimWorld* sim = world.simWorld()) races = sim->raceReports();
  std::vector<CaseOutcome> outcomes;
  for (auto& state : states) {
    if (!completed.isOk()) state.fail("completing: " + completed.toString());
    checkLocal(state);
    if (!races.empty()) state.fail("happens-before violation: " + races.front());
    if (world.simWorld() == nullptr) {
      const std::string difference = compareWithSimulator(world, *state.c, state.outcome);
      if (!difference.empty()) state.fail(difference);
    }
    // Collective verdicts: every rank calls these for every case, whatever its local outcome.
    if (!world.allRanksEqual(state.outcome.result_hash)) state.fail("ranks in other processes hold different bits");
    if (!world.allRanksAgree(state.outcome.ok) && state.outcome.ok) {
      state.outcome.ok = false;
      state.outcome.problem = "another rank failed [" + state.c->describe() + "]";
    }
    outcomes.push_back(state.outcome);
  }
  return outcomes;
}

CaseOutcome runAllreduceCase(TestWorld& world, const AllreduceCase& c) { return runAllreduceCases(world, {c}).front(); }

}  // namespace peerreduce::testing
