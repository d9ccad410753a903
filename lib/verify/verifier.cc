#include "verify/verifier.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "peerreduce/types.h"
#include "plan/flag_epochs.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {

using VectorClock = std::vector<std::uint32_t>;

// One step of one rank in the whole sequence: a plan step of operation `op`, or an entry-fence wait.
struct SequencedStep {
  int op = 0;
  const Step* step = nullptr;  // null for a fence wait
  int fence_writer = -1;
  std::uint64_t wait_target = 0;  // absolute counter value for waits (plan waits and fence waits)
  int index_in_plan = -1;
};

struct Access {
  int op;
  int rank;
  int slot;  // scratch slot, or chunk for user buffers
  bool write;
  std::uint32_t clock;  // the accessing rank's own clock at the access
  std::size_t vc;       // index of the vector-clock snapshot taken at the access
  const SequencedStep* where;
};

// Symbolic value: an expression over inputs. Interned, so equal trees have equal ids.
struct Node {
  int op = 0;
  int chunk = 0;
  int leaf_rank = -1;  // >= 0 for an input leaf
  bool finalize = false;
  std::uint64_t rank_mask = 0;       // ranks whose input appears in the tree
  std::uint64_t duplicate_mask = 0;  // ranks whose input appears more than once
  int finalize_count = 0;
};

constexpr int kNoValue = -1;

// "rank 3" or "ranks 0, 2 and 5": the ranks of a mask, for messages a person reads.
std::string ranksOf(std::uint64_t mask) {
  std::vector<int> ranks;
  for (int r = 0; r < 64; ++r) {
    if ((mask >> r) & 1u) ranks.push_back(r);
  }
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  std::string out = "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  }
  return out;
}

class Verifier {
 public:
  Verifier(std::span<const Plan* const> plans, const VerifyOptions& options)
      : plans_(plans), options_(options), n_(plans.empty() ? 0 : plans[0]->world_size) {}

  VerifyReport run() {
    if (plans_.empty()) return report_;
    if (!checkStructure()) return std::move(report_);
    sequence();
    execute();
    if (report_.ok()) checkHazards();
    checkResults();
    return std::move(report_);
  }

 private:
  void problem(std::string text) {
    if (static_cast<int>(report_.problems.size()) < options_.max_problems) report_.problems.push_back(std::move(text));
  }

  std::string where(int rank, const SequencedStep& s) const {
    std::string out = "rank " + std::to_string(rank) + " op " + std::to_string(s.op) + " ";
    if (s.step == nullptr) return out + "entry fence (wait done from rank " + std::to_string(s.fence_writer) + ")";
    const Plan& plan = *plans_[static_cast<std::size_t>(s.op)];
    return out + "step #" + std::to_string(s.index_in_plan) + " (" +
           describeStep(plan.programs[static_cast<std::size_t>(rank)], *s.step) + ")";
  }

  // Every question about a link is asked here, so the pairs asked about are the plan's links_used.
  bool linked(int from, int to) {
    if (from == to) return true;
    report_.links_used[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)] = true;
    if (options_.link.empty()) return true;
    return options_.link[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
  }

  bool checkRef(const Plan& plan, int op, int rank, int index, const BufferRef& ref, const char* role) {
    auto bad = [&](const std::string& why) {
      problem("op " + std::to_string(op) + " rank " + std::to_string(rank) + " step #" + std::to_string(index) + " " +
              role + ": " + why);
      return false;
    };
    if (ref.rank < 0 || ref.rank >= n_) return bad("rank " + std::to_string(ref.rank) + " out of range");
    switch (ref.kind) {
      case BufferKind::kInput:
      case BufferKind::kOutput:
        if (ref.rank != rank) {
          return bad("touches the user buffer of rank " + std::to_string(ref.rank) +
                     "; user buffers are private to their rank, share data through scratch");
        }
        break;
      case BufferKind::kScratch:
        if (ref.slot < 0 || ref.slot >= plan.scratch_slots) {
          return bad("scratch slot " + std::to_string(ref.slot) + " outside 0.." +
                     std::to_string(plan.scratch_slots - 1));
        }
        if (ref.rank != rank && ref.slot >= firstPrivateSlot(plan)) {
          return bad("touches rank " + std::to_string(ref.rank) + "'s private slot " + std::to_string(ref.slot) +
                     " (slots " + std::to_string(firstPrivateSlot(plan)) + ".." +
                     std::to_string(plan.scratch_slots - 1) + " are their rank's own)");
        }
        break;
      default:
        return bad("unknown buffer kind");
    }
    if (!linked(rank, ref.rank)) {
      return bad("touches rank " + std::to_string(ref.rank) + "'s memory but there is no link " + std::to_string(rank) +
                 "->" + std::to_string(ref.rank));
    }
    return true;
  }

  static bool reduces(Collective collective) {
    return collective == Collective::kAllReduce || collective == Collective::kReduceScatter;
  }

  // A user buffer that holds one block (reduce-scatter's output, all-gather's input) is touched only at
  // the rank's own block; a broadcast reads the root's send buffer only.
  template <typename At>
  bool checkBlock(const Plan& plan, const At& at, int rank, const Step& step, const BufferRef& ref) {
    if (ref.kind != BufferKind::kInput && ref.kind != BufferKind::kOutput) return true;
    const char* name = ref.kind == BufferKind::kInput ? "send" : "receive";
    if (plan.collective == Collective::kBroadcast && ref.kind == BufferKind::kInput && rank != plan.root) {
      problem(at() + ": reads the send buffer of rank " + std::to_string(rank) +
              ", but a broadcast reads only the root's (" + std::to_string(plan.root) + ")");
      return false;
    }
    const int block = step.chunk / plan.num_chunks;
    if (!holdsEveryBlock(plan.collective, ref.kind) && block != rank) {
      problem(at() + ": touches block " + std::to_string(block) + " of rank " + std::to_string(rank) + "'s " + name +
              " buffer, which in a " + std::string(collectiveName(plan.collective)) + " holds only block " +
              std::to_string(rank));
      return false;
    }
    return true;
  }

  bool checkStructure() {
    bool ok = true;
    if (n_ < 1 || n_ > kMaxWorldSize) {
      problem("world size " + std::to_string(n_) + " outside 1.." + std::to_string(kMaxWorldSize));
      return false;
    }
    report_.links_used.assign(static_cast<std::size_t>(n_), std::vector<bool>(static_cast<std::size_t>(n_), false));
    if (!options_.link.empty()) {
      bool shape_ok = options_.link.size() == static_cast<std::size_t>(n_);
      for (const auto& row : options_.link) shape_ok = shape_ok && row.size() == static_cast<std::size_t>(n_);
      if (!shape_ok) {
        problem("link matrix is not " + std::to_string(n_) + " x " + std::to_string(n_));
        return false;
      }
    }
    for (int op = 0; op < static_cast<int>(plans_.size()); ++op) {
      const Plan& plan = *plans_[static_cast<std::size_t>(op)];
      const std::string op_name = "op " + std::to_string(op);
      if (plan.world_size != n_) {
        problem(op_name + ": world size " + std::to_string(plan.world_size) + " differs from " + std::to_string(n_));
        return false;
      }
      if (static_cast<int>(plan.programs.size()) != n_) {
        problem(op_name + ": " + std::to_string(plan.programs.size()) + " programs for " + std::to_string(n_) +
                " ranks");
        return false;
      }
      if (plan.num_flags < 1 || plan.num_flags > kMaxFlags) {
        problem(op_name + ": num_flags " + std::to_string(plan.num_flags) + " outside 1.." + std::to_string(kMaxFlags));
        return false;
      }
      if (plan.num_chunks < 1) {
        problem(op_name + ": num_chunks must be at least 1");
        return false;
      }
      if (plan.private_slots < 0 || plan.private_slots > plan.scratch_slots) {
        problem(op_name + ": private_slots " + std::to_string(plan.private_slots) + " outside 0.." +
                std::to_string(plan.scratch_slots) + " (the scratch slots)");
        return false;
      }
      if (!isValidCollective(plan.collective)) {
        problem(op_name + ": unknown collective value " + std::to_string(static_cast<int>(plan.collective)));
        return false;
      }
      if (plan.num_blocks != blocksOf(plan.collective, n_)) {
        problem(op_name + ": " + std::string(collectiveName(plan.collective)) + " plan has " +
                std::to_string(plan.num_blocks) + " blocks; it needs " + std::to_string(blocksOf(plan.collective, n_)));
        return false;
      }
      if (plan.collective == Collective::kBroadcast ? plan.root < 0 || plan.root >= n_ : plan.root != 0) {
        problem(op_name + ": root " + std::to_string(plan.root) + " is not valid for a " +
                std::string(collectiveName(plan.collective)) + " of " + std::to_string(n_) + " ranks");
        return false;
      }
      if (plan.signal_counts != signalCounts(plan)) {
        problem(op_name + ": signal_counts is stale; recompute it with signalCounts() after editing the plan");
        ok = false;
      }
      for (int r = 0; r < n_; ++r) {
        const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
        for (int i = 0; i < static_cast<int>(program.steps.size()); ++i) {
          const Step& step = program.steps[static_cast<std::size_t>(i)];
          // Named only when a problem is found: formatting it for every step was a third of the check.
          const auto at = [&] { return op_name + " rank " + std::to_string(r) + " step #" + std::to_string(i); };
          if (step.copy_engine && step.kind != StepKind::kCopy) {
            // A copy engine moves bytes; it cannot fold, signal or wait.
            problem(at() + ": only a copy can be moved by a copy engine, this step is a " +
                    describeStep(program, step));
            ok = false;
          }
          switch (step.kind) {
            case StepKind::kCopy:
            case StepKind::kReduce: {
              if (step.chunk < 0 || step.chunk >= plan.num_blocks * plan.num_chunks) {
                problem(at() + ": chunk " + std::to_string(step.chunk) + " out of range");
                ok = false;
                break;
              }
              if (step.kind == StepKind::kReduce && !reduces(plan.collective)) {
                problem(at() + ": reduces in a " + std::string(collectiveName(plan.collective)) +
                        " plan, which must copy its source's bits unchanged");
                ok = false;
              }
              const bool count_ok = step.kind == StepKind::kCopy ? step.src_count == 1 : step.src_count >= 1;
              if (!count_ok || std::size_t{step.src_begin} + step.src_count > program.sources.size()) {
                problem(at() + ": bad source list (begin " + std::to_string(step.src_begin) + ", count " +
                        std::to_string(step.src_count) + ")");
                ok = false;
                break;
              }
              ok = checkRef(plan, op, r, i, step.dst, "destination") && checkBlock(plan, at, r, step, step.dst) && ok;
              if (step.dst.kind == BufferKind::kInput) {
                problem(at() + ": writes the user's send buffer, which a plan must leave untouched");
                ok = false;
              }
              for (std::uint32_t s = 0; s < step.src_count; ++s) {
                const BufferRef& source = program.sources[step.src_begin + s];
                ok = checkRef(plan, op, r, i, source, "source") && checkBlock(plan, at, r, step, source) && ok;
              }
              break;
            }
            case StepKind::kSignal:
            case StepKind::kWait:
              if (step.peer < 0 || step.peer >= n_ || step.peer == r) {
                problem(at() + ": peer " + std::to_string(step.peer) + " is not another rank");
                ok = false;
              } else if (step.flag < 0 || step.flag >= plan.num_flags) {
                problem(at() + ": flag " + std::to_string(step.flag) + " outside 0.." +
                        std::to_string(plan.num_flags - 1));
                ok = false;
              } else if (step.kind == StepKind::kWait && step.value == 0) {
                problem(at() + ": wait for value 0 orders nothing");
                ok = false;
              } else if (step.kind == StepKind::kSignal && !linked(r, step.peer)) {
                problem(at() + ": signals rank " + std::to_string(step.peer) + " but there is no link");
                ok = false;
              }
              break;
            default:
              problem(at() + ": unknown step kind");
              ok = false;
          }
        }
      }
    }
    return ok;
  }

  std::size_t counterIndex(int holder, int writer, int flag) const {
    return (static_cast<std::size_t>(holder) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(writer)) *
               kMaxFlags +
           static_cast<std::size_t>(flag);
  }

  // Lays every rank's operations end to end, with the entry fence before each and absolute wait targets.
  void sequence() {
    programs_.assign(static_cast<std::size_t>(n_), {});
    for (int r = 0; r < n_; ++r) {
      FlagEpochs epochs(n_, r);
      auto& out = programs_[static_cast<std::size_t>(r)];
      for (int op = 0; op < static_cast<int>(plans_.size()); ++op) {
        const Plan& plan = *plans_[static_cast<std::size_t>(op)];
        for (int q = 0; q < n_; ++q) {
          if (q == r || epochs.fence(q) == 0) continue;
          SequencedStep fence;
          fence.op = op;
          fence.fence_writer = q;
          fence.wait_target = epochs.fence(q);
          out.push_back(fence);
        }
        const auto& steps = plan.programs[static_cast<std::size_t>(r)].steps;
        for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
          SequencedStep s;
          s.op = op;
          s.step = &steps[static_cast<std::size_t>(i)];
          s.index_in_plan = i;
          if (s.step->kind == StepKind::kWait) s.wait_target = epochs.base(s.step->peer, s.step->flag) + s.step->value;
          out.push_back(s);
        }
        epochs.advance(plan);
      }
    }
  }

  int intern(const Node& node, const std::vector<int>& children) {
    std::vector<std::int64_t> key = {node.op, node.chunk, node.leaf_rank, node.finalize ? 1 : 0};
    key.insert(key.end(), children.begin(), children.end());
    auto [it, inserted] = interned_.emplace(std::move(key), static_cast<int>(nodes_.size()));
    if (inserted) nodes_.push_back(node);
    return it->second;
  }

  int leafValue(int op, int rank, int chunk) {
    Node leaf;
    leaf.op = op;
    leaf.chunk = chunk;
    leaf.leaf_rank = rank;
    leaf.rank_mask = std::uint64_t{1} << rank;
    return intern(leaf, {});
  }

  // Location keys for symbolic state: scratch per (owner, slot); user buffers per (owner, op, chunk),
  // with output folded onto input when the operation is in place.
  std::int64_t locationKey(int op, const BufferRef& ref, int chunk) const {
    const Plan& plan = *plans_[static_cast<std::size_t>(op)];
    const std::int64_t n = n_;
    if (ref.kind == BufferKind::kScratch) return (std::int64_t{0} << 60) | (ref.rank * 65536 + ref.slot);
    const std::int64_t kind = (ref.kind == BufferKind::kOutput && !plan.in_place) ? 2 : 1;
    return (kind << 60) | ((static_cast<std::int64_t>(op) * n + ref.rank) * 65536 + chunk);
  }

  int readValue(int rank, const SequencedStep& s, const BufferRef& ref) {
    const int chunk = s.step->chunk;
    auto it = values_.find(locationKey(s.op, ref, chunk));
    if (it == values_.end() && ref.kind == BufferKind::kInput) {
      return leafValue(s.op, ref.rank, chunk);  // the user's input, not overwritten (in place) so far
    }
    if (ref.kind == BufferKind::kInput && reduces(plans_[static_cast<std::size_t>(s.op)]->collective)) {
      // Executors premultiply every element a floating avg reads from a send buffer: only the rank's own
      // input may be read there, or a partial result would be scaled a second time.
      problem(where(rank, s) + " reads its send buffer after the operation overwrote it in place; avg premultiplies " +
              "what is read there, so a plan must read the send buffer before writing the output over it");
      return kNoValue;
    }
    if (it == values_.end()) {
      problem(where(rank, s) + " reads memory that holds no value of this operation");
      return kNoValue;
    }
    const Node& node = nodes_[static_cast<std::size_t>(it->second)];
    if (node.op != s.op) {
      problem(where(rank, s) + " reads a value left by op " + std::to_string(node.op));
      return kNoValue;
    }
    if (node.chunk != chunk) {
      problem(where(rank, s) + " reads chunk " + std::to_string(node.chunk) + "'s value as chunk " +
              std::to_string(chunk));
      return kNoValue;
    }
    return it->second;
  }

  void evaluate(int rank, const SequencedStep& s) {
    const Plan& plan = *plans_[static_cast<std::size_t>(s.op)];
    const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
    const Step& step = *s.step;
    std::vector<int> children;
    bool defined = true;
    for (std::uint32_t i = 0; i < step.src_count; ++i) {
      const int value = readValue(rank, s, program.sources[step.src_begin + i]);
      defined = defined && value != kNoValue;
      children.push_back(value);
    }
    const std::int64_t dst = locationKey(s.op, step.dst, step.chunk);
    if (!defined) {
      values_.erase(dst);
      return;
    }
    if (step.kind == StepKind::kCopy) {
      values_[dst] = children[0];
      return;
    }
    Node node;
    node.op = s.op;
    node.chunk = step.chunk;
    node.finalize = step.finalize;
    node.finalize_count = step.finalize ? 1 : 0;
    for (int child : children) {
      const Node& c = nodes_[static_cast<std::size_t>(child)];
      node.duplicate_mask |= c.duplicate_mask | (node.rank_mask & c.rank_mask);
      node.rank_mask |= c.rank_mask;
      node.finalize_count += c.finalize_count;
    }
    values_[dst] = intern(node, children);
  }

  void recordAccess(int rank, const SequencedStep& s, const BufferRef& ref, bool write, std::size_t vc) {
    Access a{s.op,
             rank,
             ref.kind == BufferKind::kScratch ? ref.slot : s.step->chunk,
             write,
             clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)],
             vc,
             &s};
    if (ref.kind == BufferKind::kScratch) {
      scratch_accesses_[static_cast<std::size_t>(ref.rank)].push_back(a);
    } else {
      user_accesses_[locationKey(s.op, ref, s.step->chunk)].push_back(a);
    }
  }

  // Runs every rank as far as it can, round robin; a wait advances only once its signal was emitted.
  // The order is a topological order of happens-before, so symbolic values are evaluated correctly.
  void execute() {
    const auto n = static_cast<std::size_t>(n_);
    clocks_.assign(n, VectorClock(n, 0));
    scratch_accesses_.assign(n, {});
    // At most one snapshot per step: reserved once, since growing it copied every earlier snapshot (a
    // tenth of a 64-rank plan's check under the sanitizers).
    std::size_t steps = 0;
    for (const auto& program : programs_) steps += program.size();
    snapshots_.clear();
    snapshots_.reserve(steps * n);
    std::vector<std::size_t> pc(n, 0);
    std::vector<std::vector<std::size_t>> signals(n * n * kMaxFlags);  // per counter: snapshot per signal
    bool progress = true;
    while (progress) {
      progress = false;
      for (std::size_t r = 0; r < n; ++r) {
        auto& program = programs_[r];
        while (pc[r] < program.size()) {
          const SequencedStep& s = program[pc[r]];
          const bool fence = s.step == nullptr;
          if (fence || s.step->kind == StepKind::kWait) {
            const int writer = fence ? s.fence_writer : s.step->peer;
            const int flag = fence ? kDoneFlag : s.step->flag;
            const auto& sent = signals[counterIndex(static_cast<int>(r), writer, flag)];
            if (sent.size() < s.wait_target) break;
            const std::uint32_t* from = snapshot(sent[s.wait_target - 1]);
            for (std::size_t k = 0; k < n; ++k) clocks_[r][k] = std::max(clocks_[r][k], from[k]);
          }
          clocks_[r][r] += 1;
          if (!fence && s.step->kind == StepKind::kSignal) {
            signals[counterIndex(s.step->peer, static_cast<int>(r), s.step->flag)].push_back(takeSnapshot(r));
          } else if (!fence && s.step->kind != StepKind::kWait) {
            const std::size_t vc = takeSnapshot(r);
            const RankProgram& prog = plans_[static_cast<std::size_t>(s.op)]->programs[r];
            for (std::uint32_t i = 0; i < s.step->src_count; ++i) {
              recordAccess(static_cast<int>(r), s, prog.sources[s.step->src_begin + i], false, vc);
            }
            recordAccess(static_cast<int>(r), s, s.step->dst, true, vc);
            evaluate(static_cast<int>(r), s);
          }
          ++pc[r];
          progress = true;
        }
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (pc[r] >= programs_[r].size()) continue;
      const SequencedStep& s = programs_[r][pc[r]];
      const int writer = s.step == nullptr ? s.fence_writer : s.step->peer;
      const int flag = s.step == nullptr ? kDoneFlag : s.step->flag;
      const std::size_t sent = signals[counterIndex(static_cast<int>(r), writer, flag)].size();
      problem("deadlock: " + where(static_cast<int>(r), s) + " waits for signal " + std::to_string(s.wait_target) +
              " of flag " + std::to_string(flag) + " from rank " + std::to_string(writer) + ", which sends only " +
              std::to_string(sent) + " before it stops");
    }
  }

  // Appends rank r's clock as a snapshot and returns its index.
  std::size_t takeSnapshot(std::size_t r) {
    snapshots_.insert(snapshots_.end(), clocks_[r].begin(), clocks_[r].end());
    return snapshots_.size() / static_cast<std::size_t>(n_) - 1;
  }
  const std::uint32_t* snapshot(std::size_t index) const {
    return snapshots_.data() + index * static_cast<std::size_t>(n_);
  }

  bool happensBefore(const Access& a, const Access& b) const {
    return snapshot(b.vc)[static_cast<std::size_t>(a.rank)] >= a.clock;
  }

  void reportRace(const Access& a, const Access& b, const std::string& memory) {
    std::string text = "race on " + memory + ": " + where(a.rank, *a.where) + (a.write ? " writes" : " reads") +
                       " while " + where(b.rank, *b.where) + (b.write ? " writes" : " reads") +
                       ", with no signal ordering them";
    if (a.op == b.op && a.write && !b.write && a.rank != b.rank) {
      // The usual mistake, a read of data its writer has not announced: say what would order them.
      text += "; rank " + std::to_string(b.rank) + " must wait, before its step #" +
              std::to_string(b.where->index_in_plan) + ", for a signal rank " + std::to_string(a.rank) +
              " sends after its step #" + std::to_string(a.where->index_in_plan);
    }
    problem(text);
  }

  // Every write against every other access of the same memory: for accesses of one operation to one
  // scratch slot or user chunk (a few per location).
  void checkPairs(const std::vector<Access>& accesses, const std::string& memory) {
    for (std::size_t i = 0; i < accesses.size(); ++i) {
      const Access& a = accesses[i];
      if (!a.write) continue;
      for (std::size_t j = 0; j < accesses.size(); ++j) {
        const Access& b = accesses[j];
        if (i == j || (b.write && j < i)) continue;  // each write-write pair once
        if (!happensBefore(a, b) && !happensBefore(b, a)) reportRace(a, b, memory);
      }
    }
  }

  // Between operations, slot sizes differ, so any access of operation k to a rank's scratch conflicts
  // with any write of a later operation j (and any write of k with any access of j). Operation k's
  // accesses must all happen before operation j's conflicting ones. By program order it is enough that
  // each rank's last access (last write) in k happens before each rank's first write (first access) in
  // j: O(ranks^2) per pair of operations instead of O(accesses^2).
  struct Boundary {
    const Access* first_access = nullptr;
    const Access* first_write = nullptr;
    const Access* last_access = nullptr;
    const Access* last_write = nullptr;
  };

  void checkAcrossOperations(const std::vector<Access>& accesses, const std::string& memory) {
    const auto ops = plans_.size();
    const auto n = static_cast<std::size_t>(n_);
    std::vector<Boundary> bounds(ops * n);  // [op * n + rank]
    for (const Access& a : accesses) {      // in each rank's program order
      Boundary& b = bounds[static_cast<std::size_t>(a.op) * n + static_cast<std::size_t>(a.rank)];
      if (b.first_access == nullptr) b.first_access = &a;
      b.last_access = &a;
      if (a.write) {
        if (b.first_write == nullptr) b.first_write = &a;
        b.last_write = &a;
      }
    }
    for (std::size_t k = 0; k < ops; ++k) {
      for (std::size_t j = k + 1; j < ops; ++j) {
        for (std::size_t r = 0; r < n; ++r) {
          const Boundary& early = bounds[k * n + r];
          for (std::size_t w = 0; w < n; ++w) {
            const Boundary& late = bounds[j * n + w];
            if (early.last_access && late.first_write && !happensBefore(*early.last_access, *late.first_write)) {
              reportRace(*early.last_access, *late.first_write, memory);
            }
            if (early.last_write && late.first_access && !happensBefore(*early.last_write, *late.first_access)) {
              reportRace(*early.last_write, *late.first_access, memory);
            }
          }
        }
      }
    }
  }

  void checkHazards() {
    for (int owner = 0; owner < n_; ++owner) {
      const auto& accesses = scratch_accesses_[static_cast<std::size_t>(owner)];
      const std::string memory = "rank " + std::to_string(owner) + "'s scratch";
      // Group by (operation, slot) for the pairwise check within operations.
      std::map<std::pair<int, int>, std::vector<Access>> by_slot;
      for (const Access& a : accesses) by_slot[{a.op, a.slot}].push_back(a);
      for (const auto& [key, group] : by_slot) checkPairs(group, memory + " slot " + std::to_string(key.second));
      checkAcrossOperations(accesses, memory);
    }
    for (const auto& [key, accesses] : user_accesses_) {
      checkPairs(accesses, "a user buffer of rank " + std::to_string(accesses.front().rank));
    }
  }

  // The rank whose input a copying collective's output chunk must hold: all-gather's block owner, the
  // broadcast root.
  static int sourceRankOf(const Plan& plan, int chunk) {
    return plan.collective == Collective::kAllGather ? chunk / plan.num_chunks : plan.root;
  }

  void checkResults() {
    const std::uint64_t all = n_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n_) - 1;
    for (int op = 0; op < static_cast<int>(plans_.size()); ++op) {
      const Plan& plan = *plans_[static_cast<std::size_t>(op)];
      for (int c = 0; c < plan.num_blocks * plan.num_chunks; ++c) {
        int reference = kNoValue;
        for (int r = 0; r < n_; ++r) {
          // Reduce-scatter: rank r's output is its own block only.
          if (!holdsEveryBlock(plan.collective, BufferKind::kOutput) && c / plan.num_chunks != r) continue;
          const auto at = [&] {
            return "op " + std::to_string(op) + " rank " + std::to_string(r) + " chunk " + std::to_string(c);
          };
          auto it = values_.find(locationKey(op, outputOf(r), c));
          if (it == values_.end()) {
            problem(at() + ": output never written");
            continue;
          }
          const Node& node = nodes_[static_cast<std::size_t>(it->second)];
          if (node.op != op || node.chunk != c) {
            problem(at() + ": output holds op " + std::to_string(node.op) + " chunk " + std::to_string(node.chunk));
          } else if (!reduces(plan.collective)) {
            const int source = sourceRankOf(plan, c);
            if (node.leaf_rank != source) {
              problem(at() + ": output is not a copy of rank " + std::to_string(source) + "'s input" +
                      (node.leaf_rank >= 0 ? " (it holds rank " + std::to_string(node.leaf_rank) + "'s)"
                                           : " (it holds a reduction)"));
            }
          } else if (node.rank_mask != all || node.duplicate_mask != 0) {
            // Both where both happened (a source named twice instead of another): one message per output.
            std::string what;
            if (node.rank_mask != all) what = "misses the input of " + ranksOf(all & ~node.rank_mask);
            if (node.duplicate_mask != 0) {
              what += (what.empty() ? "" : " and ") + std::string("counts the input of ") +
                      ranksOf(node.duplicate_mask) + " more than once";
            }
            problem(at() + ": output " + what);
          } else if (!node.finalize || node.finalize_count != 1) {
            problem(at() + ": the final reduction (avg's division) is applied " + std::to_string(node.finalize_count) +
                    " times or not at the root");
          }
          if (reference == kNoValue) {
            reference = it->second;
          } else if (reference != it->second) {
            problem(at() + ": reduction order differs from rank 0's, so the bits may differ");
          }
        }
      }
    }
  }

  std::span<const Plan* const> plans_;
  const VerifyOptions& options_;
  int n_;
  VerifyReport report_;
  std::vector<std::vector<SequencedStep>> programs_;
  std::vector<VectorClock> clocks_;
  // Every snapshot's n entries, one after another (snapshot i at i * n): one allocation for all of them
  // instead of a vector per data step, which was most of the verifier's time under a sanitizer.
  std::vector<std::uint32_t> snapshots_;
  std::vector<std::vector<Access>> scratch_accesses_;
  std::map<std::int64_t, std::vector<Access>> user_accesses_;
  std::map<std::int64_t, int> values_;
  std::vector<Node> nodes_;
  std::map<std::vector<std::int64_t>, int> interned_;
};

}  // namespace

Status VerifyReport::toStatus(std::string_view what) const {
  if (ok()) return Status::ok();
  std::string message = std::string(what) + " failed verification:";
  for (const auto& p : problems) message += "\n  " + p;
  return internalError(std::move(message));
}

VerifyReport verifySequence(std::span<const Plan* const> plans, const VerifyOptions& options) {
  return Verifier(plans, options).run();
}

VerifyReport verifyPlan(const Plan& plan, const VerifyOptions& options) {
  const Plan* twice[2] = {&plan, &plan};
  return verifySequence(twice, options);
}

}  // namespace peerreduce
