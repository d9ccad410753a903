#include "engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "host_reduce.h"
#include "select/timing_model.h"
#include "util/log.h"

namespace peerreduce::sim {
namespace {

// Symmetric-memory record a simulated rank hands its peers (the simulator's "IPC handle").
struct SymmetricRecord {
  std::uint32_t magic;
  std::uint32_t rank;
  std::uint64_t world_id;
  std::uint64_t bytes;
};
constexpr std::uint32_t kSymmetricMagic = 0x5052534d;  // "PRSM"

std::atomic<std::uint64_t> g_next_world_id{1};

const char* stepName(StepKind kind) {
  switch (kind) {
    case StepKind::kCopy:
      return "copy";
    case StepKind::kReduce:
      return "reduce";
    case StepKind::kSignal:
      return "signal";
    case StepKind::kWait:
      return "wait";
  }
  return "?";
}

}  // namespace

SimEngine::SimEngine(int world_size, SimOptions options)
    : world_size_(world_size),
      options_(std::move(options)),
      world_id_(g_next_world_id.fetch_add(1)),
      topology_(options_.topology.worldSize() == 0 ? Topology::fullMesh(world_size) : options_.topology),
      timing_(topology_),
      prng_(options_.seed),
      counters_(static_cast<std::size_t>(world_size) * static_cast<std::size_t>(world_size) * kMaxFlags),
      races_(world_size, [this](const AccessSite& site) { return describeSite(site); }),
      agreement_(world_size),
      trace_(options_.record_trace),
      link_scratch_(static_cast<std::size_t>(world_size) * static_cast<std::size_t>(world_size), 0),
      recent_plans_(static_cast<std::size_t>(world_size)),
      in_sync_(static_cast<std::size_t>(world_size), false) {
  for (int r = 0; r < world_size; ++r) {
    auto state = std::make_unique<RankState>();
    state->epochs = std::make_unique<FlagEpochs>(world_size, r);
    state->phase = std::make_unique<PhaseTimer>(timing_, r);
    ranks_.push_back(std::move(state));
  }
  stats_.rank_time_us.assign(static_cast<std::size_t>(world_size), 0.0);
  stats_.link_bytes.assign(static_cast<std::size_t>(world_size) * static_cast<std::size_t>(world_size), 0);
  sources_.reserve(static_cast<std::size_t>(world_size) * 2);
  from_send_.reserve(static_cast<std::size_t>(world_size) * 2);
}

SimEngine::~SimEngine() = default;

SimEngine::Counter& SimEngine::counter(int holder, int writer, int flag) {
  const auto n = static_cast<std::size_t>(world_size_);
  return counters_[(static_cast<std::size_t>(holder) * n + static_cast<std::size_t>(writer)) * kMaxFlags +
                   static_cast<std::size_t>(flag)];
}

StatusOr<std::vector<std::byte>> SimEngine::openSymmetric(int rank, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (state.memory) {
    return invalidArgumentError("simulated rank " + std::to_string(rank) + " already opened its symmetric memory");
  }
  // Mapped, not allocated: pages a plan never touches are never made resident (region_memory.h).
  state.memory = RegionMemory::map(bytes);
  if (!state.memory) {
    return outOfMemoryError("simulated rank " + std::to_string(rank) + " could not allocate " + std::to_string(bytes) +
                            " bytes of symmetric memory in host RAM; lower PEERREDUCE_POOL_BYTES");
  }
  state.memory_bytes = bytes;
  const SymmetricRecord record{kSymmetricMagic, static_cast<std::uint32_t>(rank), world_id_, bytes};
  std::vector<std::byte> out(sizeof(record));
  std::memcpy(out.data(), &record, sizeof(record));
  return out;
}

Status SimEngine::connectPeers(int rank, const std::vector<std::vector<std::byte>>& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (records.size() != static_cast<std::size_t>(world_size_)) {
    return invalidArgumentError("simulated rank " + std::to_string(rank) + " got " + std::to_string(records.size()) +
                                " peer records for a world of " + std::to_string(world_size_));
  }
  for (int peer = 0; peer < world_size_; ++peer) {
    const auto& bytes = records[static_cast<std::size_t>(peer)];
    const std::string who = "rank " + std::to_string(rank) + " mapping rank " + std::to_string(peer) + ": ";
    if (bytes.size() != sizeof(SymmetricRecord)) {
      return corruptError(who + "record of " + std::to_string(bytes.size()) + " bytes, expected " +
                          std::to_string(sizeof(SymmetricRecord)));
    }
    SymmetricRecord record;
    std::memcpy(&record, bytes.data(), sizeof(record));
    if (record.magic != kSymmetricMagic) return corruptError(who + "record does not start with the simulator's magic");
    if (record.world_id != world_id_) {
      return corruptError(who + "record belongs to simulated world " + std::to_string(record.world_id) + ", not " +
                          std::to_string(world_id_));
    }
    if (record.rank != static_cast<std::uint32_t>(peer)) {
      return corruptError(who + "record names rank " + std::to_string(record.rank));
    }
    const RankState& other = *ranks_[static_cast<std::size_t>(peer)];
    if (!other.memory || record.bytes != other.memory_bytes) {
      return corruptError(who + "record describes " + std::to_string(record.bytes) +
                          " bytes but that rank's region is " + std::to_string(other.memory_bytes));
    }
  }
  ranks_[static_cast<std::size_t>(rank)]->connected = true;
  return Status::ok();
}

// A simulated GPU cannot reach memory it has no link to, whatever the plan says: a plan that would
// touch such a peer is refused before it runs, naming the step and the missing link.
Status SimEngine::checkLinks(int rank, const RankProgram& program) const {
  for (std::size_t index = 0; index < program.steps.size(); ++index) {
    const Step& s = program.steps[index];
    const auto stray = firstTouchedPeer(program, s, rank, [&](int peer) { return peer < 0 || peer >= world_size_; });
    if (stray) {
      return invalidArgumentError("simulated rank " + std::to_string(rank) + ": step #" + std::to_string(index) +
                                  " names rank " + std::to_string(*stray) + " of a world of " +
                                  std::to_string(world_size_));
    }
    const auto unlinked = firstTouchedPeer(program, s, rank, [&](int peer) { return !linkUsable(rank, peer); });
    if (unlinked) {
      return unavailableError("simulated rank " + std::to_string(rank) + ": step #" + std::to_string(index) + " (" +
                              describeStep(program, s) + ") needs link " + std::to_string(rank) + "->" +
                              std::to_string(*unlinked) + ", which this topology does not have");
    }
  }
  return Status::ok();
}

Status SimEngine::submit(int rank, const ExecutionRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  const std::string who = "simulated rank " + std::to_string(rank) + ": ";
  if (!state.error.isOk()) return state.error;
  if (!state.connected) return unavailableError(who + "submit before its peers were connected");
  if (!request.plan || request.plan->world_size != world_size_ ||
      request.plan->programs.size() != static_cast<std::size_t>(world_size_)) {
    return invalidArgumentError(who + "plan is missing or made for another world size");
  }
  if (request.plan->num_flags > kMaxFlags) {
    return invalidArgumentError(who + "plan uses " + std::to_string(request.plan->num_flags) + " flags; at most " +
                                std::to_string(kMaxFlags));
  }
  if (request.channel < 0 || request.channel >= kMaxChannels) {
    return invalidArgumentError(who + "channel " + std::to_string(request.channel) + " outside 0.." +
                                std::to_string(kMaxChannels - 1));
  }
  PR_RETURN_IF_ERROR(checkLinks(rank, request.plan->programs[static_cast<std::size_t>(rank)]));
  const std::size_t elem = dataTypeSize(request.dtype);
  if (elem == 0 || !isValidReduceOp(request.op)) return invalidArgumentError(who + "invalid dtype or op");
  // Steps address the user's buffers through the layout: one made for another count or chunking would
  // read and write past them, or leave part of the output unwritten and still report success.
  const ChunkLayout& layout = request.layout;
  const bool chunks_cover_count =
      request.count == 0 || (layout.chunk_capacity > 0 &&
                             (request.count - 1) / layout.chunk_capacity < static_cast<std::size_t>(layout.num_chunks));
  if (layout.count != request.count || layout.num_chunks != request.plan->num_chunks || !chunks_cover_count) {
    return invalidArgumentError(who + "chunk layout (" + std::to_string(layout.count) + " elements in " +
                                std::to_string(layout.num_chunks) + " chunks of " +
                                std::to_string(layout.chunk_capacity) + ") does not split the operation's " +
                                std::to_string(request.count) + " elements into the plan's " +
                                std::to_string(request.plan->num_chunks) + " chunks; use ChunkLayout::make");
  }
  const Plan& plan = *request.plan;
  if (plan.num_blocks > 1 && request.count > 0 && request.block_stride < request.count) {
    return invalidArgumentError(who + "block stride of " + std::to_string(request.block_stride) +
                                " elements is shorter than the " + std::to_string(request.count) +
                                "-element blocks of a " + std::string(collectiveName(plan.collective)) +
                                " (the blocks would overlap); pass the user's per-rank count");
  }
  const bool batched = !request.batch.empty();
  if (batched && plan.collective != Collective::kAllReduce) {
    return invalidArgumentError(who + "a batch runs only allreduce plans, not " +
                                std::string(collectiveName(plan.collective)));
  }
  if (batched) {
    PR_RETURN_IF_ERROR(checkBatch(rank, request));
  } else if (request.count > 0 && (request.recv == nullptr || (request.send == nullptr && readsSend(plan, rank)))) {
    return invalidArgumentError(who + "null buffer");
  }
  const std::size_t needed = scratchBytes(*request.plan, request.layout, elem);
  if (request.scratch_offset > state.memory_bytes || needed > state.memory_bytes - request.scratch_offset) {
    return outOfMemoryError(who + "operation needs " + std::to_string(needed) + " bytes of scratch at offset " +
                            std::to_string(request.scratch_offset) + " but the region has " +
                            std::to_string(state.memory_bytes));
  }
  // Last, so that a request refused above leaves no trace in the agreement and consumes no number.
  const Status agreed =
      agreement_.record(rank, state.next_seq,
                        OperationDescriptor{request.count, request.dtype, request.op, plan.algorithm, plan.num_chunks,
                                            plan.scratch_slots, plan.num_flags, plan.collective, plan.root});
  if (!agreed.isOk()) {
    // Every rank that already submitted this operation fails too: its peers' plans disagree with its
    // own, so it would wait for signals never sent or read scratch laid out for another count.
    for (int r = 0; r < world_size_; ++r) {
      if (r == rank || ranks_[static_cast<std::size_t>(r)]->next_seq > state.next_seq) failRank(r, agreed);
    }
    return agreed;
  }
  Operation op;
  op.request = request;
  op.seq = state.next_seq++;
  op.slot_bytes = scratchSlotBytes(request.layout, elem);
  if (batched) adoptBatch(op, elem);
  state.queue.push_back(std::move(op));
  auto& recent = recent_plans_[static_cast<std::size_t>(rank)];
  recent.emplace_back(state.queue.back().seq, request.plan);
  if (recent.size() > kRecentPlans) recent.pop_front();
  return Status::ok();
}

bool SimEngine::readsSend(const Plan& plan, int rank) {
  return plan.collective != Collective::kBroadcast || rank == plan.root;  // a broadcast reads the root's only
}

std::string SimEngine::describeSite(const AccessSite& site) const {
  std::string out =
      "rank " + std::to_string(site.rank) + " op " + std::to_string(site.op) + " step #" + std::to_string(site.step);
  for (const auto& [seq, plan] : recent_plans_[static_cast<std::size_t>(site.rank)]) {
    if (seq != site.op) continue;
    const RankProgram& program = plan->programs[static_cast<std::size_t>(site.rank)];
    if (site.step >= 0 && static_cast<std::size_t>(site.step) < program.steps.size()) {
      out += " (" + describeStep(program, program.steps[static_cast<std::size_t>(site.step)]) + ")";
    }
  }
  return out;
}

int SimEngine::fenceBlocker(int rank) {
  const FlagEpochs& epochs = *ranks_[static_cast<std::size_t>(rank)]->epochs;
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer != rank && counter(rank, peer, kDoneFlag).count < epochs.fence(peer)) return peer;
  }
  return -1;
}

SimEngine::Readiness SimEngine::readiness(int rank) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (state.queue.empty()) return Readiness::kIdle;
  if (faults_.any && halted(rank)) return Readiness::kIdle;                     // a crashed rank never acts again
  if (state.aborted.load(std::memory_order_relaxed)) return Readiness::kReady;  // step() fails the op
  Operation& op = state.queue.front();
  bool ready = true;
  if (!op.fenced) {
    ready = fenceBlocker(rank) < 0;
  } else {
    const Step& s = op.request.plan->programs[static_cast<std::size_t>(rank)].steps[op.pc];
    if (s.kind == StepKind::kWait)
      ready = counter(rank, s.peer, s.flag).count >= state.epochs->base(s.peer, s.flag) + s.value;
  }
  if (ready) return Readiness::kReady;
  if (op.wait_start_us < 0) op.wait_start_us = state.clock_us;
  return Readiness::kBlocked;
}

std::byte* SimEngine::resolve(int rank, const Operation& op, const BufferRef& ref, int chunk) {
  const std::size_t elem = dataTypeSize(op.request.dtype);
  const ExecutionRequest& request = op.request;
  const std::size_t offset =
      userChunkOffset(request.plan->collective, ref.kind, request.layout, request.block_stride, chunk) * elem;
  switch (ref.kind) {
    case BufferKind::kInput:
      return const_cast<std::byte*>(static_cast<const std::byte*>(op.request.send)) + offset;
    case BufferKind::kOutput:
      return static_cast<std::byte*>(op.request.recv) + offset;
    case BufferKind::kScratch:
      return ranks_[static_cast<std::size_t>(ref.rank)]->memory.get() + op.request.scratch_offset +
             static_cast<std::size_t>(ref.slot) * op.slot_bytes;
  }
  (void)rank;
  return nullptr;
}

bool SimEngine::executeData(int rank, Operation& op, const Step& s) {
  const RankProgram& program = op.request.plan->programs[static_cast<std::size_t>(rank)];
  const std::size_t count = op.request.layout.size(op.request.layout.chunkOf(s.chunk));
  const int step_index = static_cast<int>(op.pc);
  if (options_.race_checking) {
    for (std::uint32_t i = 0; i < s.src_count; ++i) {
      const BufferRef& src = program.sources[s.src_begin + i];
      if (src.kind == BufferKind::kScratch) races_.read(rank, op.seq, step_index, src.rank, src.slot);
    }
    if (s.dst.kind == BufferKind::kScratch) races_.write(rank, op.seq, step_index, s.dst.rank, s.dst.slot);
  }
  if (count == 0) return true;
  const std::size_t bytes = count * dataTypeSize(op.request.dtype);
  std::byte* const real_dst = resolve(rank, op, s.dst, s.chunk);
  std::byte* dst = real_dst;
  sources_.clear();
  from_send_.clear();
  for (std::uint32_t i = 0; i < s.src_count; ++i) {
    const BufferRef& src = program.sources[s.src_begin + i];
    sources_.push_back(resolve(rank, op, src, s.chunk));
    from_send_.push_back(src.kind == BufferKind::kInput ? 1 : 0);
  }
  // Data across host-staged links passes through pinned host memory (engine_links.cc).
  if (ranks_[static_cast<std::size_t>(rank)]->staging && !stageIn(rank, op, s, bytes, dst)) return false;
  // A copy moves bits, except out of the send buffer under avg: a floating avg premultiplies every element
  // read from a send buffer (kernels/reduce_ops.h), so that copy is a one-source reduction.
  if (s.kind == StepKind::kCopy && !(op.request.op == ReduceOp::kAvg && from_send_.front() != 0)) {
    if (sources_.front() != dst) std::memmove(dst, sources_.front(), bytes);
  } else {
    const bool finalize = s.kind == StepKind::kReduce && s.finalize;
    kernels::hostReduce(op.request.dtype, op.request.op, dst, sources_.data(), static_cast<int>(s.src_count), count,
                        finalize, world_size_, from_send_.data());
  }
  if (ranks_[static_cast<std::size_t>(rank)]->staging) stageOut(rank, dst, real_dst, bytes);
  return true;
}

Status SimEngine::reserveTimeMarks(int rank, std::size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (count == 0) return invalidArgumentError("simulated rank " + std::to_string(rank) + ": zero time marks");
  ranks_[static_cast<std::size_t>(rank)]->mark_times.assign(count, std::numeric_limits<double>::quiet_NaN());
  return Status::ok();
}

StatusOr<bool> SimEngine::markTime(int rank, std::size_t mark) {
  std::lock_guard<std::mutex> lock(mutex_);
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (mark >= state.mark_times.size()) {
    return invalidArgumentError("simulated rank " + std::to_string(rank) + ": time mark " + std::to_string(mark) +
                                " of " + std::to_string(state.mark_times.size()) + " reserved");
  }
  state.mark_times[mark] = std::numeric_limits<double>::quiet_NaN();
  for (Operation& op : state.queue) {  // a re-marked mark no longer waits for an earlier operation
    std::erase(op.marks_after, mark);
  }
  if (state.queue.empty()) {
    state.mark_times[mark] = state.clock_us;
  } else {
    state.queue.back().marks_after.push_back(mark);
  }
  return true;
}

StatusOr<std::optional<double>> SimEngine::markedSpanUs(int rank, std::size_t from, std::size_t to) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (from >= state.mark_times.size() || to >= state.mark_times.size()) {
    return invalidArgumentError("simulated rank " + std::to_string(rank) + ": time marks " + std::to_string(from) +
                                ", " + std::to_string(to) + " of " + std::to_string(state.mark_times.size()) +
                                " reserved");
  }
  const double a = state.mark_times[from];
  const double b = state.mark_times[to];
  if (std::isnan(a) || std::isnan(b)) return std::optional<double>{};
  return std::optional<double>{b - a};
}

void SimEngine::failRank(int rank, Status status) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  PR_WARN(rank, "simulated operation failed: %s", status.toString().c_str());
  if (state.error.isOk()) state.error = std::move(status);
  state.queue.clear();  // later operations depended on this one's epochs; they cannot run either
}

void SimEngine::finishOperation(int rank) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  const Operation& done = state.queue.front();
  if (!done.batch.empty()) unpackBatch(done, dataTypeSize(done.request.dtype));
  for (const std::size_t mark : done.marks_after) state.mark_times[mark] = state.clock_us;
  state.epochs->advance(*state.queue.front().request.plan);
  state.queue.pop_front();
  stats_.operations += 1;
  // Arrivals below every future target are no longer needed: drop them so memory stays bounded.
  for (int writer = 0; writer < world_size_; ++writer) {
    for (int flag = 0; flag < kMaxFlags; ++flag) {
      Counter& c = counter(rank, writer, flag);
      const std::uint64_t keep_from = std::max<std::uint64_t>(state.epochs->base(writer, flag), 1);
      while (!c.arrivals.empty() && c.first_kept < keep_from) {
        c.arrivals.pop_front();
        ++c.first_kept;
      }
    }
  }
}

// The entry fence as one action: the operation's launch, then the done signal of every peer that
// touched this rank's memory in earlier operations (readiness() checked they have all arrived). The
// launch is charged here, as PlanCostEvaluator charges it at the start of every plan execution.
void SimEngine::passFence(int rank, Operation& op) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  const double start = state.clock_us;
  const double begun = op.wait_start_us < 0 ? start : op.wait_start_us;
  state.clock_us += timingOf(rank).launchUs();
  int last_peer = -1;
  for (int peer = 0; peer < world_size_; ++peer) {
    const std::uint64_t target = peer == rank ? 0 : state.epochs->fence(peer);
    if (target == 0) continue;
    Counter& c = counter(rank, peer, kDoneFlag);
    const Arrival& arrival = c.arrivals[target - c.first_kept];
    if (arrival.time_us > state.clock_us) last_peer = peer;
    state.clock_us = std::max(state.clock_us, arrival.time_us);
    if (options_.race_checking) races_.join(rank, arrival.clock);
  }
  op.fenced = true;
  op.wait_start_us = -1.0;
  if (!op.batch.empty()) packBatch(op, dataTypeSize(op.request.dtype));
  state.phase->close();
  if (state.clock_us - begun > options_.wait_timeout_us) {
    failRank(rank,
             timeoutError("rank " + std::to_string(rank) + " op " + std::to_string(op.seq) + " entry fence: rank " +
                          std::to_string(last_peer) + " finished with this rank's memory " +
                          std::to_string(state.clock_us - begun) + " us after the fence began (limit " +
                          std::to_string(options_.wait_timeout_us) + " us)"));
    return;
  }
  if (options_.race_checking) races_.tick(rank);
  if (trace_.keepsEvents()) {
    trace_.record(TraceEvent{rank, op.seq, -1, "entry fence", start, state.clock_us, 0, -1, 0, false});
  } else {
    trace_.fingerprintOnly(rank, op.seq, -1, start);
  }
  // A rank with no steps in this plan is done once fenced (step() would index past its empty program).
  if (op.request.plan->programs[static_cast<std::size_t>(rank)].steps.empty()) finishOperation(rank);
}

void SimEngine::step(int rank) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  Operation& op = state.queue.front();
  const Plan& plan = *op.request.plan;
  if (state.aborted.load(std::memory_order_relaxed)) {
    failRank(rank, abortedError("rank " + std::to_string(rank) + " op " + std::to_string(op.seq) +
                                ": aborted by the application"));
    return;
  }
  const double timeout = options_.wait_timeout_us;
  if (!op.fenced) {
    passFence(rank, op);
    return;
  }
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  const Step& s = program.steps[op.pc];
  if (faults_.any && faultBeforeStep(rank, op, s)) return;
  const double start = state.clock_us;
  TraceEvent event;
  event.rank = rank;
  event.op = op.seq;
  event.step = static_cast<int>(op.pc);
  event.start_us = start;
  switch (s.kind) {
    case StepKind::kWait: {
      Counter& c = counter(rank, s.peer, s.flag);
      const std::uint64_t target = state.epochs->base(s.peer, s.flag) + s.value;
      const Arrival& arrival = c.arrivals[target - c.first_kept];
      const double begun = op.wait_start_us < 0 ? start : op.wait_start_us;
      state.clock_us = std::max(state.clock_us, arrival.time_us);
      if (state.clock_us - begun > timeout) {
        failRank(rank,
                 timeoutError("rank " + std::to_string(rank) + " op " + std::to_string(op.seq) + " step #" +
                              std::to_string(op.pc) + " (" + describeStep(program, s) + "): the signal from rank " +
                              std::to_string(s.peer) + " came " + std::to_string(state.clock_us - begun) +
                              " us after the wait began (limit " + std::to_string(timeout) + " us)"));
        return;
      }
      op.wait_start_us = -1.0;
      state.phase->close();
      if (options_.race_checking) races_.join(rank, arrival.clock);
      event.flow_peer = s.peer;
      event.flow_id = arrival.trace_id;
      break;
    }
    case StepKind::kSignal: {
      state.phase->close();
      state.clock_us += timingOf(rank).signalIssueUs();
      Counter& c = counter(s.peer, rank, s.flag);
      c.count += 1;
      Arrival arrival;
      arrival.time_us = state.clock_us + timingOf(rank).signalLatencyUs(rank, s.peer);
      if (faults_.any) arrival.time_us += extraSignalDelay(rank, s.peer);
      if (options_.race_checking) {
        races_.tick(rank);
        arrival.clock = races_.clock(rank);
      }
      arrival.trace_id = next_trace_id_++;
      event.flow_peer = s.peer;
      event.flow_id = arrival.trace_id;
      event.flow_start = true;
      c.arrivals.push_back(std::move(arrival));
      break;
    }
    case StepKind::kCopy:
    case StepKind::kReduce: {
      state.clock_us = state.phase->addDataStep(program, s, op.request.layout, dataTypeSize(op.request.dtype),
                                                state.clock_us, &stats_.link_bytes);
      event.bytes = op.request.layout.size(op.request.layout.chunkOf(s.chunk)) * dataTypeSize(op.request.dtype);
      if (!executeData(rank, op, s)) return;  // the operation failed (and left the queue)
      break;
    }
  }
  if (options_.race_checking) races_.tick(rank);
  stats_.steps += 1;
  event.end_us = state.clock_us;
  if (trace_.keepsEvents()) {
    event.name = std::string(stepName(s.kind)) + (s.kind == StepKind::kCopy || s.kind == StepKind::kReduce
                                                      ? " c" + std::to_string(s.chunk)
                                                      : " r" + std::to_string(s.peer));
    trace_.record(std::move(event));
  } else {
    trace_.fingerprintOnly(rank, op.seq, static_cast<int>(op.pc), start);
  }
  if (++op.pc == program.steps.size()) finishOperation(rank);
}

void SimEngine::timeoutEarliestWait() {
  int victim = -1;
  double earliest = std::numeric_limits<double>::infinity();
  for (int r = 0; r < world_size_; ++r) {
    RankState& state = *ranks_[static_cast<std::size_t>(r)];
    if (state.queue.empty()) continue;
    if (faults_.any && halted(r)) continue;  // a crashed rank waits for nothing; its peers time out
    const double deadline = state.queue.front().wait_start_us + options_.wait_timeout_us;
    if (deadline < earliest) {
      earliest = deadline;
      victim = r;
    }
  }
  if (victim < 0) return;
  RankState& state = *ranks_[static_cast<std::size_t>(victim)];
  Operation& op = state.queue.front();
  state.clock_us = std::max(state.clock_us, earliest);
  std::string what;
  if (!op.fenced) {
    what = "entry fence waiting for rank " + std::to_string(fenceBlocker(victim)) +
           " to finish with this rank's memory from an earlier operation";
  } else {
    const RankProgram& program = op.request.plan->programs[static_cast<std::size_t>(victim)];
    const Step& s = program.steps[op.pc];
    what = "step #" + std::to_string(op.pc) + " (" + describeStep(program, s) + "), counter at " +
           std::to_string(counter(victim, s.peer, s.flag).count) + ", rank " + std::to_string(s.peer) +
           " never sent the signal";
  }
  failRank(victim, timeoutError("rank " + std::to_string(victim) + " op " + std::to_string(op.seq) + " (" +
                                op.request.plan->description + "): " + what + " within " +
                                std::to_string(options_.wait_timeout_us) + " us of virtual time"));
}

Status SimEngine::runLocked() {
  std::vector<int> runnable;
  runnable.reserve(static_cast<std::size_t>(world_size_));
  // Bound: every iteration executes one action or fails one rank's queue, and queues are finite.
  for (;;) {
    runnable.clear();
    bool blocked = false;
    for (int r = 0; r < world_size_; ++r) {
      const Readiness ready = readiness(r);
      if (ready == Readiness::kReady) runnable.push_back(r);
      blocked = blocked || ready == Readiness::kBlocked;
    }
    if (runnable.empty()) {
      if (!blocked) break;
      timeoutEarliestWait();
      continue;
    }
    step(runnable[prng_.below(runnable.size())]);
  }
  for (int r = 0; r < world_size_; ++r) {
    stats_.rank_time_us[static_cast<std::size_t>(r)] = ranks_[static_cast<std::size_t>(r)]->clock_us;
    stats_.virtual_time_us = std::max(stats_.virtual_time_us, ranks_[static_cast<std::size_t>(r)]->clock_us);
  }
  return Status::ok();
}

Status SimEngine::runUntilIdle() {
  std::lock_guard<std::mutex> lock(mutex_);
  PR_RETURN_IF_ERROR(runLocked());
  for (int r = 0; r < world_size_; ++r) {
    const Status& error = ranks_[static_cast<std::size_t>(r)]->error;
    if (!error.isOk()) return error;
  }
  return Status::ok();
}

bool SimEngine::waitForRound(std::unique_lock<std::mutex>& lock, int rank, std::uint64_t generation,
                             std::chrono::steady_clock::time_point deadline) {
  // abort() only sets an atomic (it must not block behind a round that holds the mutex), so the wait
  // polls it; the deadline bounds the loop.
  const auto released = [&] { return sync_generation_ != generation; };
  const std::atomic<bool>& aborted = ranks_[static_cast<std::size_t>(rank)]->aborted;
  bool done = released();
  while (!done && !aborted.load() && std::chrono::steady_clock::now() < deadline) {
    const auto poll_until = std::min(deadline, std::chrono::steady_clock::now() + kAbortPollInterval);
    done = sync_cv_.wait_until(lock, poll_until, released);
  }
  return done;
}

Status SimEngine::synchronize(int rank, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::uint64_t generation = sync_generation_;
  in_sync_[static_cast<std::size_t>(rank)] = true;
  if (++sync_count_ == world_size_) {
    const Status run = runLocked();
    // Release the other ranks whatever happened, so none waits out its timeout for a finished round.
    std::fill(in_sync_.begin(), in_sync_.end(), false);
    sync_count_ = 0;
    ++sync_generation_;
    sync_cv_.notify_all();
    PR_RETURN_IF_ERROR(run);
  } else if (!waitForRound(lock, rank, generation, deadline)) {
    std::string missing;
    for (int r = 0; r < world_size_; ++r) {
      if (!in_sync_[static_cast<std::size_t>(r)]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
    }
    in_sync_[static_cast<std::size_t>(rank)] = false;
    --sync_count_;
    if (ranks_[static_cast<std::size_t>(rank)]->aborted.load()) {
      // Left the round: the operations it was waiting for will never run, so they end here.
      Status aborted = abortedError("simulated rank " + std::to_string(rank) +
                                    ": aborted by the application while waiting in synchronize for ranks " + missing);
      failRank(rank, aborted);
      return aborted;
    }
    return timeoutError("simulated rank " + std::to_string(rank) + " waited " + std::to_string(timeout.count()) +
                        " ms (PEERREDUCE_TIMEOUT_MS) in synchronize for ranks " + missing +
                        "; on the simulator synchronize is collective, every rank must call it within that time");
  }
  return ranks_[static_cast<std::size_t>(rank)]->error;
}

Status SimEngine::asyncError(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ranks_[static_cast<std::size_t>(rank)]->error;
}

void SimEngine::abort(int rank) { ranks_[static_cast<std::size_t>(rank)]->aborted.store(true); }

SimStats SimEngine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  SimStats stats = stats_;
  stats.trace_events_dropped = trace_.droppedEvents();
  return stats;
}

std::vector<std::string> SimEngine::raceReports() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return races_.reports();
}

std::uint64_t SimEngine::traceFingerprint() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return trace_.fingerprint();
}

std::string SimEngine::chromeTraceJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return trace_.chromeJson(world_size_);
}

void SimEngine::resetStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.operations = 0;
  stats_.steps = 0;
  std::fill(stats_.link_bytes.begin(), stats_.link_bytes.end(), 0);
  races_.clearReports();
  trace_.clear();
}

}  // namespace peerreduce::sim
