#include "mpi/mpi_transport.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>

#include "host_reduce.h"
#include "mpi/mpi_environment.h"
#include "peerreduce/mpi_bootstrap.h"
#include "topology/machines.h"
#include "util/log.h"

namespace peerreduce::mpi {
namespace {

// The record a rank hands its peers: who it is and how large its region is (every rank's must match,
// since operations address the same scratch offsets on every rank).
struct RegionRecord {
  std::uint32_t magic;
  std::int32_t rank;
  std::int32_t world_size;
  std::uint32_t reserved;
  std::uint64_t bytes;
};
constexpr std::uint32_t kRegionMagic = 0x5052524d;  // "PRRM"

// Polls of a wait before it yields the processor, and before it sleeps between polls: a reply or a
// signal of a fast network comes within the first, and the ranks of an oversubscribed host need the
// processor back after that.
constexpr unsigned kSpinPolls = 32;
constexpr unsigned kYieldPolls = 512;
constexpr auto kPollSleep = std::chrono::microseconds(20);

int commRank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int commSize(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

// Failures a peer or the network caused: this rank is still sound, and its peers learn of the cause
// themselves (telling them this rank stopped would make them name this rank instead).
bool causedByPeers(const Status& status) {
  return status.code() == ErrorCode::kTimeout || status.code() == ErrorCode::kPeerLost ||
         status.code() == ErrorCode::kLinkDown;
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm, MpiTransportOptions options)
    : channel_(comm, commRank(comm), commSize(comm)),
      options_(std::move(options)),
      rank_(commRank(comm)),
      world_size_(commSize(comm)),
      epochs_(world_size_, rank_),
      counters_(static_cast<std::size_t>(world_size_) * kMaxFlags, 0),
      suspects_(static_cast<std::size_t>(world_size_), -1),
      staging_(rank_, options_.pinned_limit_bytes),
      health_(new std::atomic<int>[static_cast<std::size_t>(world_size_)]),
      severed_(new std::atomic<bool>[static_cast<std::size_t>(world_size_)]) {
  for (int p = 0; p < world_size_; ++p) {
    health_[static_cast<std::size_t>(p)].store(kHealthUnknown);
    severed_[static_cast<std::size_t>(p)].store(false);
  }
}

void MpiTransport::injectLinkDown(int peer) {
  if (peer >= 0 && peer < world_size_ && peer != rank_) severed_[static_cast<std::size_t>(peer)].store(true);
}

bool MpiTransport::severed(int peer) const { return severed_[static_cast<std::size_t>(peer)].load(); }

Status MpiTransport::sendControl(int peer, const ControlMessage& message) {
  if (severed(peer)) return Status::ok();  // lost on the way, as on a link that is down
  return channel_.sendControl(peer, message);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && aborted_.load() && connected_) notifyPeers(ControlKind::kAborted, rank_);
}

std::string MpiTransport::machine(int peer) const { return options_.rank_noun + " " + std::to_string(peer); }

std::string MpiTransport::who() const {
  return "MPI transport " + machine(rank_) + " of " + std::to_string(world_size_);
}

TransportIdentity MpiTransport::identity() const {
  return TransportIdentity{"mpi " + machine(rank_) + " of " + std::to_string(world_size_), "mpi", rank_, world_size_};
}

Topology MpiTransport::topology() const { return networkTopology(world_size_, options_.network); }

StatusOr<OpenedRegion> MpiTransport::openSymmetric(std::size_t bytes) {
  if (region_) return invalidArgumentError(who() + ": the symmetric region is already open");
  if (bytes == 0) return invalidArgumentError(who() + ": a symmetric region of 0 bytes");
  region_.reset(new (std::nothrow) std::byte[bytes]);
  if (!region_) {
    return outOfMemoryError(who() + ": could not allocate " + std::to_string(bytes) +
                            " bytes of host memory for the symmetric region; lower PEERREDUCE_POOL_BYTES");
  }
  region_bytes_ = bytes;
  const RegionRecord record{kRegionMagic, rank_, world_size_, 0, bytes};
  OpenedRegion opened;
  opened.record.resize(sizeof(record));
  std::memcpy(opened.record.data(), &record, sizeof(record));
  opened.host_address = region_.get();
  return opened;
}

Status MpiTransport::connectPeers(const std::vector<std::vector<std::byte>>& records) {
  if (!region_) return invalidArgumentError(who() + ": connectPeers before openSymmetric");
  if (records.size() != static_cast<std::size_t>(world_size_)) {
    return invalidArgumentError(who() + ": " + std::to_string(records.size()) + " peer records for a world of " +
                                std::to_string(world_size_));
  }
  for (int peer = 0; peer < world_size_; ++peer) {
    const auto& bytes = records[static_cast<std::size_t>(peer)];
    const std::string from = who() + ": the record of " + machine(peer) + " ";
    if (bytes.size() != sizeof(RegionRecord)) {
      return corruptError(from + "has " + std::to_string(bytes.size()) + " bytes, expected " +
                          std::to_string(sizeof(RegionRecord)));
    }
    RegionRecord record;
    std::memcpy(&record, bytes.data(), sizeof(record));
    if (record.magic != kRegionMagic) return corruptError(from + "is not an MPI transport's record");
    if (record.rank != peer || record.world_size != world_size_) {
      return corruptError(from + "names rank " + std::to_string(record.rank) + " of a world of " +
                          std::to_string(record.world_size));
    }
    if (record.bytes != region_bytes_) {
      return mismatchError(from + "describes a region of " + std::to_string(record.bytes) + " bytes, this one has " +
                           std::to_string(region_bytes_) + "; every rank must open the same size");
    }
  }
  PR_RETURN_IF_ERROR(channel_.start());
  connected_ = true;
  return Status::ok();
}

Status MpiTransport::checkPlan(const Plan& plan) const {
  if (plan.world_size != world_size_ || plan.programs.size() != static_cast<std::size_t>(world_size_)) {
    return invalidArgumentError(who() + ": plan \"" + plan.description + "\" is for a world of " +
                                std::to_string(plan.world_size));
  }
  if (plan.num_flags < 1 || plan.num_flags > kMaxFlags) {
    return invalidArgumentError(who() + ": plan uses " + std::to_string(plan.num_flags) + " flags; 1.." +
                                std::to_string(kMaxFlags) + " are supported");
  }
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank_)];
  const int chunks = plan.num_blocks * plan.num_chunks;
  for (std::size_t index = 0; index < program.steps.size(); ++index) {
    const Step& s = program.steps[index];
    const std::string step = who() + ": plan \"" + plan.description + "\" step #" + std::to_string(index) + " (" +
                             describeStep(program, s) + ")";
    const auto in_world = [&](int r) { return r >= 0 && r < world_size_; };
    switch (s.kind) {
      case StepKind::kSignal:
      case StepKind::kWait:
        if (!in_world(s.peer) || s.flag < 0 || s.flag >= plan.num_flags) {
          return invalidArgumentError(step + " names a rank or flag outside the plan");
        }
        continue;
      case StepKind::kCopy:
      case StepKind::kReduce:
        break;
    }
    if (s.chunk < 0 || s.chunk >= chunks || s.src_count < 1 ||
        static_cast<std::size_t>(s.src_begin) + s.src_count > program.sources.size()) {
      return invalidArgumentError(step + " has a chunk or sources outside the plan");
    }
    if (s.dst.rank != rank_) {
      return unsupportedError(step + " writes " + machine(s.dst.rank) +
                              "'s memory; the MPI transport carries pull plans only (a rank writes its own "
                              "buffers and reads its peers' scratch)");
    }
    for (std::uint32_t i = 0; i < s.src_count; ++i) {
      const BufferRef& src = program.sources[s.src_begin + i];
      if (!in_world(src.rank) || (src.rank != rank_ && src.kind != BufferKind::kScratch)) {
        return invalidArgumentError(step + " reads a user buffer of another rank, or a rank outside the world");
      }
    }
    if (s.dst.kind == BufferKind::kInput) return invalidArgumentError(step + " writes the send buffer");
  }
  return Status::ok();
}

Status MpiTransport::preparePlan(const std::shared_ptr<const Plan>& plan) {
  if (!plan) return invalidArgumentError(who() + ": preparePlan without a plan");
  PR_RETURN_IF_ERROR(checkPlan(*plan));
  if (std::find(prepared_.begin(), prepared_.end(), plan) == prepared_.end()) prepared_.push_back(plan);
  return Status::ok();
}

Status MpiTransport::submit(const ExecutionRequest& request, StreamHandle stream) {
  if (aborted_.load()) return fail(abortedError(who() + ": aborted by the application"), true);
  const Status sticky = asyncError();
  if (!sticky.isOk()) return sticky;
  if (!connected_) return unavailableError(who() + ": submit before its peers were connected");
  if (!request.plan) return invalidArgumentError(who() + ": submit without a plan");
  const Plan& plan = *request.plan;
  if (std::find(prepared_.begin(), prepared_.end(), request.plan) == prepared_.end()) {
    PR_RETURN_IF_ERROR(checkPlan(plan));
  }
  if (!request.batch.empty()) {
    return unsupportedError(who() + ": batched submits (the MPI transport has no BatchSubmit capability)");
  }
  if (request.channel < 0 || request.channel >= kMaxChannels) {
    return invalidArgumentError(who() + ": channel " + std::to_string(request.channel) + " outside 0.." +
                                std::to_string(kMaxChannels - 1));
  }
  const std::size_t elem = dataTypeSize(request.dtype);
  if (elem == 0 || !isValidReduceOp(request.op)) return invalidArgumentError(who() + ": invalid dtype or op");
  const ChunkLayout& layout = request.layout;
  const bool chunks_cover_count =
      request.count == 0 || (layout.chunk_capacity > 0 &&
                             (request.count - 1) / layout.chunk_capacity < static_cast<std::size_t>(layout.num_chunks));
  if (layout.count != request.count || layout.num_chunks != plan.num_chunks || !chunks_cover_count) {
    return invalidArgumentError(who() + ": the chunk layout does not split the operation's " +
                                std::to_string(request.count) + " elements into the plan's " +
                                std::to_string(plan.num_chunks) + " chunks; use ChunkLayout::make");
  }
  if (plan.num_blocks > 1 && request.count > 0 && request.block_stride < request.count) {
    return invalidArgumentError(who() + ": block stride of " + std::to_string(request.block_stride) +
                                " elements is shorter than the " + std::to_string(request.count) + "-element blocks");
  }
  const bool reads_send = plan.collective != Collective::kBroadcast || rank_ == plan.root;
  if (request.count > 0 && (request.recv == nullptr || (reads_send && request.send == nullptr))) {
    return invalidArgumentError(who() + ": null buffer");
  }
  const std::size_t slot_bytes = scratchSlotBytes(layout, elem);
  if (slot_bytes > static_cast<std::size_t>(INT_MAX)) {
    return invalidArgumentError(who() + ": chunks of " + std::to_string(slot_bytes) +
                                " bytes; one MPI message carries at most " + std::to_string(INT_MAX));
  }
  const std::size_t needed = scratchBytes(plan, layout, elem);
  if (request.scratch_offset > region_bytes_ || needed > region_bytes_ - request.scratch_offset) {
    return outOfMemoryError(who() + ": operation needs " + std::to_string(needed) + " bytes of scratch at offset " +
                            std::to_string(request.scratch_offset) + " but the region has " +
                            std::to_string(region_bytes_));
  }
  Operation op;
  op.request = request;
  op.request.batch = {};
  op.stream = stream;
  op.seq = next_seq_++;
  queue_.push_back(std::move(op));
  return Status::ok();
}

Status MpiTransport::synchronize(StreamHandle /*stream*/, std::chrono::milliseconds timeout) {
  if (aborted_.load()) return fail(abortedError(who() + ": aborted by the application"), true);
  const Status sticky = asyncError();
  if (!sticky.isOk()) return sticky;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!queue_.empty()) {
    const Status done = execute(queue_.front(), deadline);
    if (!done.isOk()) {
      // A failure this rank caused (not a peer's loss or silence) is told to the peers at once, so they
      // fail naming this machine instead of waiting out their deadlines.
      const bool caused_here = !causedByPeers(done);
      return fail(done, caused_here);
    }
    queue_.pop_front();
  }
  return Status::ok();
}

Status MpiTransport::asyncError() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return error_;
}

void MpiTransport::abort() { aborted_.store(true); }

PeerHealth MpiTransport::peerHealth(int peer) const {
  if (peer < 0 || peer >= world_size_) return PeerHealth::kUnknown;
  if (peer == rank_) {
    if (aborted_.load()) return PeerHealth::kLost;
    std::lock_guard<std::mutex> lock(error_mutex_);
    return error_.isOk() || causedByPeers(error_) ? PeerHealth::kAlive : PeerHealth::kLost;
  }
  if (severed(peer)) return PeerHealth::kLinkDown;  // injected: this rank knows the link is down
  switch (health_[static_cast<std::size_t>(peer)].load()) {
    case kHealthAlive:
      return PeerHealth::kAlive;
    case kHealthLost:
      return PeerHealth::kLost;
    default:
      return PeerHealth::kUnknown;
  }
}

Status MpiTransport::fail(Status status, bool tell_peers) {
  for (MpiChannel::PendingReply& reply : replies_) channel_.cancelReply(&reply);
  replies_.clear();
  staging_.discard();
  queue_.clear();
  if (tell_peers && connected_) notifyPeers(ControlKind::kAborted, rank_);
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (error_.isOk()) {
    PR_WARN(rank_, "%s", status.toString().c_str());
    error_ = status;
  }
  return error_;
}

void MpiTransport::notifyPeers(ControlKind kind, int peer) {
  if (kind == ControlKind::kAborted) {
    if (told_peers_) return;
    told_peers_ = true;
  }
  ControlMessage message;
  message.kind = kind;
  message.peer = peer;
  for (int p = 0; p < world_size_; ++p) {
    // Best effort: a peer that cannot be told finds out at its own deadline.
    if (p != rank_) sendControl(p, message).ignoreError();
  }
  if (kind == ControlKind::kAborted) poll().ignoreError();  // start the sends before returning
}

Status MpiTransport::handleMessage(int source, const ControlMessage& message, std::size_t received_bytes) {
  if (source >= 0 && source < world_size_ && severed(source)) return Status::ok();  // dropped by the link
  PR_RETURN_IF_ERROR(checkControlMessage(message, received_bytes, source, world_size_, kMaxFlags, region_bytes_));
  auto& health = health_[static_cast<std::size_t>(source)];
  if (health.load() != kHealthLost) health.store(kHealthAlive);
  switch (message.kind) {
    case ControlKind::kSignal:
      counter(source, message.flag) += 1;
      suspects_[static_cast<std::size_t>(source)] = -1;  // it made progress: whatever it waited for came
      return Status::ok();
    case ControlKind::kRead:
      if (!region_) return corruptError(who() + ": " + machine(source) + " read a region not open yet");
      return channel_.sendReply(source, region_.get() + message.offset, message.bytes);
    case ControlKind::kAborted:
      health.store(kHealthLost);
      return Status::ok();
    case ControlKind::kSuspect:
      suspects_[static_cast<std::size_t>(source)] = message.peer;
      return Status::ok();
  }
  return Status::ok();
}

Status MpiTransport::poll() {
  return channel_.poll([this](int source, const ControlMessage& message, std::size_t bytes) {
    return handleMessage(source, message, bytes);
  });
}

MpiTransport::Culprit MpiTransport::culpritFrom(int awaited) const {
  int culprit = awaited;
  for (int hop = 0; hop < world_size_; ++hop) {
    const int next = suspects_[static_cast<std::size_t>(culprit)];
    if (next < 0 || next == rank_) break;
    // Two machines each waiting for the other, both alive (each told this rank): the link between them.
    if (suspects_[static_cast<std::size_t>(next)] == culprit) {
      return Culprit{std::min(culprit, next), std::max(culprit, next)};
    }
    culprit = next;
  }
  return Culprit{culprit, -1};
}

Status MpiTransport::waitUntil(const std::function<StatusOr<bool>()>& ready, const std::function<int()>& awaited,
                               const std::function<std::string()>& what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = std::min(start + running_.op->request.timeout, running_.sync_deadline);
  const auto window = std::min<Clock::duration>(options_.suspicion_window, (deadline - start) / 2);
  const auto suspect_at = deadline - window;
  bool suspected = false;
  // Bound: every iteration either returns or reads the clock, and the deadline ends the loop.
  for (unsigned polls = 0;; ++polls) {
    PR_RETURN_IF_ERROR(poll());
    PR_ASSIGN_OR_RETURN(const bool done, ready());
    if (done) return Status::ok();
    if (aborted_.load()) return abortedError(who() + ": aborted by the application while " + what());
    for (int p = 0; p < world_size_; ++p) {
      if (p != rank_ && health_[static_cast<std::size_t>(p)].load() == kHealthLost) {
        return peerLostError(who() + ": " + machine(p) + " stopped taking part (its transport was aborted or failed) " +
                             "while this rank was " + what());
      }
    }
    const auto now = Clock::now();
    if (!suspected && now >= suspect_at) {
      suspected = true;
      notifyPeers(ControlKind::kSuspect, awaited());
    }
    if (now >= deadline) {
      const int waited_for = awaited();
      const Culprit culprit = culpritFrom(waited_for);
      const std::string waited =
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count()) +
          " ms while this rank was " + what();
      if (culprit.link_to >= 0) {
        return linkDownError(who() + ": the link between " + machine(culprit.machine) + " and " +
                             machine(culprit.link_to) + " is down (each waits for the other) after " + waited +
                             " (waiting for " + machine(waited_for) + ")");
      }
      if (culprit.machine != rank_) health_[static_cast<std::size_t>(culprit.machine)].store(kHealthLost);
      std::string message = who() + ": " + machine(culprit.machine) + " did not answer within " + waited;
      if (culprit.machine != waited_for) message += " (" + machine(waited_for) + " was waiting for it too)";
      return timeoutError(message);
    }
    if (polls >= kYieldPolls) {
      std::this_thread::sleep_for(kPollSleep);
    } else if (polls >= kSpinPolls) {
      std::this_thread::yield();
    }
  }
}

std::byte* MpiTransport::resolveLocal(const BufferRef& ref, int chunk) const {
  const ExecutionRequest& request = running_.op->request;
  const std::size_t elem = dataTypeSize(request.dtype);
  const std::size_t offset =
      userChunkOffset(request.plan->collective, ref.kind, request.layout, request.block_stride, chunk) * elem;
  switch (ref.kind) {
    case BufferKind::kInput:
      return const_cast<std::byte*>(static_cast<const std::byte*>(running_.send)) + offset;
    case BufferKind::kOutput:
      return static_cast<std::byte*>(running_.recv) + offset;
    case BufferKind::kScratch:
      break;
  }
  return region_.get() + request.scratch_offset + static_cast<std::size_t>(ref.slot) * running_.slot_bytes;
}

Status MpiTransport::executeData(const Step& s, int index) {
  const ExecutionRequest& request = running_.op->request;
  const Plan& plan = *request.plan;
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank_)];
  const std::size_t elem = dataTypeSize(request.dtype);
  const std::size_t count = request.layout.size(request.layout.chunkOf(s.chunk));
  if (count == 0) return Status::ok();
  const std::size_t bytes = count * elem;
  if (fetched_.size() < s.src_count) fetched_.resize(s.src_count);
  sources_.clear();
  from_send_.clear();
  replies_.clear();
  // Every read of the step is asked for at once, so their round trips overlap.
  for (std::uint32_t i = 0; i < s.src_count; ++i) {
    const BufferRef& src = program.sources[s.src_begin + i];
    from_send_.push_back(src.kind == BufferKind::kInput ? 1 : 0);
    if (src.rank == rank_) {
      sources_.push_back(resolveLocal(src, s.chunk));
      continue;
    }
    auto& buffer = fetched_[i];
    if (buffer.size() < bytes) buffer.resize(bytes);
    sources_.push_back(buffer.data());
    PR_RETURN_IF_ERROR(channel_.postReply(src.rank, buffer.data(), bytes, &replies_.emplace_back()));
    ControlMessage read;
    read.kind = ControlKind::kRead;
    read.offset = request.scratch_offset + static_cast<std::size_t>(src.slot) * running_.slot_bytes;
    read.bytes = bytes;
    PR_RETURN_IF_ERROR(sendControl(src.rank, read));
  }
  if (!replies_.empty()) {
    std::size_t arrived = 0;
    PR_RETURN_IF_ERROR(waitUntil(
        [&]() -> StatusOr<bool> {
          while (arrived < replies_.size()) {
            PR_ASSIGN_OR_RETURN(const bool done, channel_.testReply(&replies_[arrived]));
            if (!done) return false;
            ++arrived;
          }
          return true;
        },
        [&] { return replies_[arrived].peer; },
        [&] {
          return "reading " + machine(replies_[arrived].peer) + "'s scratch at op " + std::to_string(running_.op->seq) +
                 " step #" + std::to_string(index) + " (" + describeStep(program, s) + ")";
        }));
    replies_.clear();
  }
  std::byte* dst = resolveLocal(s.dst, s.chunk);
  // A copy moves bits, except out of the send buffer under avg, which a floating avg premultiplies
  // (kernels/reduce_ops.h): that copy is a one-source reduction.
  if (s.kind == StepKind::kCopy && !(request.op == ReduceOp::kAvg && from_send_.front() != 0)) {
    if (sources_.front() != dst) std::memmove(dst, sources_.front(), bytes);
    return Status::ok();
  }
  const bool finalize = s.kind == StepKind::kReduce && s.finalize;
  kernels::hostReduce(request.dtype, request.op, dst, sources_.data(), static_cast<int>(s.src_count), count, finalize,
                      plan.world_size, from_send_.data());
  return Status::ok();
}

Status MpiTransport::execute(const Operation& op, std::chrono::steady_clock::time_point sync_deadline) {
  const Plan& plan = *op.request.plan;
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank_)];
  PR_ASSIGN_OR_RETURN(const HostBuffers host, staging_.stageIn(op.request, op.stream));
  running_ = Running{&op, host.send, host.recv, scratchSlotBytes(op.request.layout, dataTypeSize(op.request.dtype)),
                     sync_deadline};
  const std::string op_name = "op " + std::to_string(op.seq) + " (" + plan.description + ")";
  // The fences: every peer's done counter has reached what the operations so far owe this rank, i.e. no
  // peer still reads this rank's memory. At entry (as every transport) and again at the end, so that this
  // rank answers its peers' reads until they no longer need its scratch.
  int fence_blocker = -1;
  const auto fenced = [&]() -> StatusOr<bool> {
    for (int peer = 0; peer < world_size_; ++peer) {
      if (peer != rank_ && counter(peer, kDoneFlag) < epochs_.fence(peer)) {
        fence_blocker = peer;
        return false;
      }
    }
    return true;
  };
  const auto blocker = [&] { return fence_blocker; };
  PR_RETURN_IF_ERROR(waitUntil(fenced, blocker, [&] { return "entering " + op_name; }));
  for (std::size_t index = 0; index < program.steps.size(); ++index) {
    const Step& s = program.steps[index];
    switch (s.kind) {
      case StepKind::kCopy:
      case StepKind::kReduce:
        PR_RETURN_IF_ERROR(executeData(s, static_cast<int>(index)));
        break;
      case StepKind::kSignal:
        if (s.peer == rank_) {
          counter(rank_, s.flag) += 1;
        } else {
          ControlMessage signal;
          signal.kind = ControlKind::kSignal;
          signal.flag = s.flag;
          PR_RETURN_IF_ERROR(sendControl(s.peer, signal));
        }
        break;
      case StepKind::kWait: {
        const std::uint64_t target = epochs_.base(s.peer, s.flag) + s.value;
        PR_RETURN_IF_ERROR(waitUntil(
            [&]() -> StatusOr<bool> { return counter(s.peer, s.flag) >= target; }, [&] { return s.peer; },
            [&] {
              return "waiting at " + op_name + " step #" + std::to_string(index) + " (" + describeStep(program, s) +
                     "), counter at " + std::to_string(counter(s.peer, s.flag)) + " of " + std::to_string(target);
            }));
        break;
      }
    }
  }
  epochs_.advance(plan);
  PR_RETURN_IF_ERROR(waitUntil(fenced, blocker, [&] { return "finishing " + op_name; }));
  return staging_.stageOut();
}

StatusOr<std::vector<std::shared_ptr<MpiTransport>>> createMpiTransports(MPI_Comm machines, int count,
                                                                         const MpiTransportOptions& options) {
  if (count < 1) return invalidArgumentError("createMpiTransports: " + std::to_string(count) + " transports");
  PR_RETURN_IF_ERROR(checkThreadLevelFor(count));
  if (machines == MPI_COMM_NULL) return invalidArgumentError("createMpiTransports: the communicator is MPI_COMM_NULL");
  int size = 0;
  int rank = 0;
  MPI_Comm_size(machines, &size);
  MPI_Comm_rank(machines, &rank);
  if (size < 1 || size > kMaxWorldSize) {
    return invalidArgumentError("createMpiTransports: " + std::to_string(size) + " processes; 1.." +
                                std::to_string(kMaxWorldSize) + " are supported");
  }
  std::vector<std::shared_ptr<MpiTransport>> transports;
  for (int i = 0; i < count; ++i) {
    MPI_Comm own = MPI_COMM_NULL;
    const int rc = MPI_Comm_dup(machines, &own);
    if (rc != MPI_SUCCESS) {
      return unavailableError("MPI_Comm_dup failed on machine " + std::to_string(rank) + ": " + mpiErrorText(rc));
    }
    MPI_Comm_set_errhandler(own, MPI_ERRORS_RETURN);
    const std::string name = "peerreduce machines, local rank " + std::to_string(i);
    MPI_Comm_set_name(own, name.c_str());
    transports.push_back(std::make_shared<MpiTransport>(own, options));
  }
  PR_INFO(rank,
          "MPI transports: %d on %d machines; MPI %s GPU memory (GPU buffers are staged through pinned host "
          "memory either way)",
          count, size, mpiReadsGpuMemory() ? "reads" : "does not read");
  return transports;
}

Status connectOverMpi(MpiTransport& transport, std::size_t region_bytes, std::chrono::milliseconds timeout) {
  PR_ASSIGN_OR_RETURN(const OpenedRegion opened, transport.openSymmetric(region_bytes));
  // The MPI bootstrap over the transport's own communicator: its exchange is bounded and typed, and it
  // runs on a duplicate, so it never meets the transport's messages.
  PR_ASSIGN_OR_RETURN(const std::shared_ptr<Bootstrap> bootstrap, createMpiBootstrap(transport.comm()));
  const std::size_t record_bytes = opened.record.size();
  std::vector<std::byte> all(record_bytes * static_cast<std::size_t>(transport.worldSize()));
  PR_RETURN_IF_ERROR(bootstrap->allGather(opened.record, all, timeout));
  std::vector<std::vector<std::byte>> records;
  for (int r = 0; r < transport.worldSize(); ++r) {
    const auto* begin = all.data() + static_cast<std::size_t>(r) * record_bytes;
    records.emplace_back(begin, begin + record_bytes);
  }
  return transport.connectPeers(records);
}

}  // namespace peerreduce::mpi
