#include "batch_case.h"

#include <cstring>
#include <vector>

#include "reference/reference.h"
#include "util/hash.h"

namespace peerreduce::testing {
namespace {

constexpr unsigned char kBatchCaseGuard = 0xA5;  // fills bytes the batch must not touch
constexpr std::size_t kGapElements = 8;          // untouched elements before, between and after the items

std::uint64_t itemSeed(const BatchCase& c, std::size_t item) { return c.seed * 1000003u + item; }

// Where each item lives in a rank's buffers (elements from the buffer start) and the buffers' size.
struct Layout {
  std::vector<std::size_t> at;
  std::size_t total_elements = 0;
};

Layout layoutOf(const BatchCase& c) {
  Layout layout;
  std::size_t next = kGapElements;
  for (const BatchCaseItem& item : c.items) {
    next += item.offset;
    layout.at.push_back(next);
    next += item.count + kGapElements;
  }
  layout.total_elements = next;
  return layout;
}

struct BatchBuffers {
  int rank = 0;
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;
  std::vector<unsigned char> send_image;  // the send buffer before the call
  std::vector<unsigned char> recv_image;  // the receive buffer before the call
};

}  // namespace

std::string BatchCase::describe() const {
  std::string out = "world " + std::to_string(world_size) + ", " + std::string(dataTypeName(dtype)) + " " +
                    std::string(reduceOpName(op)) + ", seed " + std::to_string(seed) + ", items [";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i ? " " : "") + std::to_string(items[i].count) + (items[i].in_place ? "i" : "o") + "+" +
           std::to_string(items[i].offset);
  }
  return out + "]";
}

namespace {

// The case's outcome on `world`, without the comparison with the simulator.
CaseOutcome runLocally(TestWorld& world, const BatchCase& c) {
  CaseOutcome outcome;
  auto fail = [&](const std::string& problem) {
    if (outcome.ok) {
      outcome.ok = false;
      outcome.problem = problem + " [" + c.describe() + "]";
    }
  };
  const std::size_t elem = dataTypeSize(c.dtype);
  const Layout layout = layoutOf(c);
  const std::size_t total_bytes = layout.total_elements * elem;
  const int n = world.size();
  // inputs[item][rank]
  std::vector<std::vector<std::vector<unsigned char>>> inputs(c.items.size());
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    inputs[i].assign(static_cast<std::size_t>(n), std::vector<unsigned char>(c.items[i].count * elem));
    for (int r = 0; r < n; ++r) {
      fillPayload(c.dtype, c.op, itemSeed(c, i), r, inputs[i][static_cast<std::size_t>(r)].data(), c.items[i].count);
    }
  }
  std::vector<BatchBuffers> locals;
  for (int r : world.localRanks()) {
    BatchBuffers local;
    local.rank = r;
    local.send_image.assign(total_bytes, kBatchCaseGuard);
    local.recv_image.assign(total_bytes, kBatchCaseGuard);
    for (std::size_t i = 0; i < c.items.size(); ++i) {
      const auto& mine = inputs[i][static_cast<std::size_t>(r)];
      if (!mine.empty()) std::memcpy(local.send_image.data() + layout.at[i] * elem, mine.data(), mine.size());
    }
    local.send = world.allocate(total_bytes);
    local.send->upload(local.send_image.data(), 0, total_bytes);
    local.recv = world.allocate(total_bytes);
    local.recv->upload(local.recv_image.data(), 0, total_bytes);
    locals.push_back(std::move(local));
  }
  for (auto& local : locals) {
    std::vector<BatchItem> items;
    for (std::size_t i = 0; i < c.items.size(); ++i) {
      auto* send = static_cast<unsigned char*>(local.send->data()) + layout.at[i] * elem;
      auto* recv = c.items[i].in_place ? send : static_cast<unsigned char*>(local.recv->data()) + layout.at[i] * elem;
      items.push_back(BatchItem{send, recv, c.items[i].count});
    }
    const Status s = world.comm(local.rank).allreduceBatch(items, c.dtype, c.op, world.stream(local.rank));
    if (!s.isOk()) fail("rank " + std::to_string(local.rank) + " allreduceBatch: " + s.toString());
  }
  const Status completed = world.completeAll();
  if (!completed.isOk()) fail("completing: " + completed.toString());
  if (sim::SimWorld* sim = world.simWorld(); sim != nullptr && !sim->raceReports().empty()) {
    fail("happens-before violation: " + sim->raceReports().front());
  }

  // Expected images: each item's result where its output is, guards everywhere else.
  Fnv1a hash;
  std::vector<unsigned char> first_bits;
  for (auto& local : locals) {
    if (!outcome.ok) break;
    const std::string who = "rank " + std::to_string(local.rank) + ": ";
    std::vector<unsigned char> send_after(total_bytes), recv_after(total_bytes);
    local.send->download(send_after.data(), 0, total_bytes);
    local.recv->download(recv_after.data(), 0, total_bytes);
    std::vector<unsigned char> send_expected = local.send_image;
    std::vector<unsigned char> recv_expected = local.recv_image;
    std::vector<unsigned char> bits;
    for (std::size_t i = 0; i < c.items.size() && outcome.ok; ++i) {
      const std::size_t bytes = c.items[i].count * elem;
      if (bytes == 0) continue;
      std::vector<unsigned char>& after = c.items[i].in_place ? send_after : recv_after;
      std::vector<unsigned char>& expected = c.items[i].in_place ? send_expected : recv_expected;
      const unsigned char* output = after.data() + layout.at[i] * elem;
      std::vector<const void*> ins;
      for (const auto& in : inputs[i]) ins.push_back(in.data());
      const ReferenceResult reference = referenceReduce(c.dtype, c.op, ins, c.items[i].count);
      const std::string problem = compareToReference(c.dtype, c.op, reference, output, c.items[i].count);
      if (!problem.empty()) fail(who + "item " + std::to_string(i) + " differs from the reference: " + problem);
      std::memcpy(expected.data() + layout.at[i] * elem, output, bytes);  // the result itself is checked above
      bits.insert(bits.end(), output, output + bytes);
    }
    if (outcome.ok && send_after != send_expected) fail(who + "the send buffer changed outside in-place outputs");
    if (outcome.ok && recv_after != recv_expected) fail(who + "the receive buffer changed outside the outputs");
    if (first_bits.empty()) {
      first_bits = bits;
      hash.addBytes(bits.data(), bits.size());
      outcome.result_hash = hash.value();
    } else if (bits != first_bits) {
      fail(who + "bits differ from rank " + std::to_string(locals.front().rank) + "'s");
    }
  }
  return outcome;
}

}  // namespace

CaseOutcome runBatchCase(TestWorld& world, const BatchCase& c) {
  CaseOutcome outcome = runLocally(world, c);
  if (world.simWorld() == nullptr && outcome.ok) {
    // The GPU's bits against the simulator's for the same batch on the same configuration.
    sim::SimOptions options;
    options.seed = c.seed;
    auto sim = makeSimTestWorld(world.size(), options, world.comm(world.localRanks().front()).config());
    if (!sim.isOk()) {
      outcome.ok = false;
      outcome.problem = "simulated world: " + sim.status().toString();
    } else {
      const CaseOutcome simulated = runLocally(**sim, c);
      if (!simulated.ok) {
        outcome.ok = false;
        outcome.problem = "the simulator failed the same batch: " + simulated.problem;
      } else if (simulated.result_hash != outcome.result_hash) {
        outcome.ok = false;
        outcome.problem = "GPU bits differ from the simulator's [" + c.describe() + "]";
      }
    }
  }
  // Collective verdicts: every rank calls these, whatever its local outcome.
  if (!world.allRanksEqual(outcome.result_hash) && outcome.ok) {
    outcome.ok = false;
    outcome.problem = "ranks in other processes hold different bits [" + c.describe() + "]";
  }
  if (!world.allRanksAgree(outcome.ok) && outcome.ok) {
    outcome.ok = false;
    outcome.problem = "another rank failed [" + c.describe() + "]";
  }
  return outcome;
}

}  // namespace peerreduce::testing
