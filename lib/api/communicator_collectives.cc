// Communicator::reduceScatter, allGather and broadcast: the collectives other than allreduce.
//
// Each has its own PlanChoice (broadcast one per root), built at the collective's first call: its
// candidates (algorithms/candidates.h: one-shot and ring), verified against the agreed links when
// Config::verify_plans is set, prepared on the transport, and a selector over them (the cost model, and
// the tuning table's entries for the collective where it has some). Every rank builds the
// same choice from the same topology and settings, so ranks agree without talking; a communicator that
// only allreduces pays nothing for them. A call then validates its arguments, picks the plan for its size
// and placement, and goes through the one submit path (api/operation_submit.h).
#include <limits>
#include <string>

#include "algorithms/candidates.h"
#include "api/argument_checks.h"
#include "api/communicator_impl.h"
#include "api/kernel_blocks.h"
#include "api/operation_submit.h"
#include "api/strided_collectives.h"
#include "peerreduce/communicator.h"
#include "util/log.h"

namespace peerreduce {
namespace {

PlanChoice& choiceOf(Communicator::Impl& impl, Collective collective, int root) {
  if (collective == Collective::kReduceScatter) return impl.reduce_scatter;
  if (collective == Collective::kAllGather) return impl.all_gather;
  if (impl.broadcast.empty()) impl.broadcast.resize(static_cast<std::size_t>(impl.size));
  return impl.broadcast[static_cast<std::size_t>(root)];
}

// What is forced on `collective`: its own setting, else PEERREDUCE_ALGO (applied by the candidates only
// where the collective has that algorithm).
Algorithm forcedAlgorithm(const Config& config, Collective collective) {
  const Algorithm own = config.algorithmSettingOf(collective);
  return own != Algorithm::kAuto ? own : config.algorithm;
}

const char* ownSettingName(Collective collective) {
  return collective == Collective::kReduceScatter ? "PEERREDUCE_ALGO_REDUCE_SCATTER"
         : collective == Collective::kAllGather   ? "PEERREDUCE_ALGO_ALL_GATHER"
                                                  : "PEERREDUCE_ALGO_BROADCAST";
}

Status buildChoice(Communicator::Impl& impl, Collective collective, int root, PlanChoice& choice) {
  PR_ASSIGN_OR_RETURN(CandidateSet set,
                      buildCollectiveCandidates(collective, root, impl.size, impl.topology, impl.config.verify_plans,
                                                forcedAlgorithm(impl.config, collective)));
  const Algorithm own = impl.config.algorithmSettingOf(collective);
  if (set.candidates.empty() && own != Algorithm::kAuto) {
    // The setting, not the machine, is wrong: say which and why, as a forced allreduce algorithm does.
    return invalidArgumentError("the configured " + std::string(collectiveName(collective)) + " algorithm " +
                                std::string(algorithmName(own)) + " (" + ownSettingName(collective) +
                                ") cannot run on this topology (" + impl.topology.describe() + ": " +
                                (set.excluded.empty() ? std::string("no plan") : set.excluded.front()) + "); unset " +
                                ownSettingName(collective) + " or pick another");
  }
  std::vector<SelectorCandidate> selectable;
  for (const Candidate& c : set.candidates) {
    for (const auto& plan : c.plans) PR_RETURN_IF_ERROR(impl.transport->preparePlan(plan));
    selectable.push_back({c.plans[0]});
  }
  if (!selectable.empty()) {
    // Measured choices where the tuning table has entries for this collective, the cost model elsewhere.
    SelectorTuning tuning;
    if (impl.tuning) tuning = SelectorTuning{&*impl.tuning, impl.architecture};
    PR_ASSIGN_OR_RETURN(choice.selector,
                        AlgorithmSelector::create(selectable, impl.topology, impl.config.scratch_bytes, tuning));
  }
  choice.candidates = std::move(set.candidates);
  choice.excluded = std::move(set.excluded);
  PR_RETURN_IF_ERROR(attachPlanFile(impl, collective, root, choice));
  choice.built = true;
  return Status::ok();
}

// The plan `collective` runs for a block of `block_bytes`, built at first use.
StatusOr<const Candidate*> chooseCandidate(Communicator::Impl& impl, Collective collective, int root,
                                           std::size_t block_bytes, bool in_place = false) {
  PlanChoice& choice = choiceOf(impl, collective, root);
  if (!choice.built) {
    const Status built = buildChoice(impl, collective, root, choice);
    if (!built.isOk()) {
      choice = PlanChoice{};  // nothing half-built: the next call tries again and fails the same way
      return built.withContext("rank " + std::to_string(impl.rank) + " building its " +
                               std::string(collectiveName(collective)) + " plans");
    }
  }
  if (choice.candidates.empty()) {
    return unavailableError(std::string(collectiveName(collective)) + " on rank " + std::to_string(impl.rank) +
                            ": no plan can run on this topology (" + impl.topology.describe() + ": " +
                            (choice.excluded.empty() ? std::string("no plan") : choice.excluded.front()) + ")");
  }
  return &choice.choose(block_bytes, in_place);
}

Status abortedCall(const Communicator::Impl& impl, const char* call) {
  return abortedError("rank " + std::to_string(impl.rank) + ": " + call +
                      " on a communicator that was aborted; destroy it and create a new one");
}

// Everything after validation: the plan for the size and placement, then the one submit path.
Status submitCollective(Communicator::Impl& impl, Collective collective, int root, const void* send, void* recv,
                        std::size_t block_count, DataType dtype, ReduceOp op, bool in_place, StreamHandle stream,
                        const char* call, std::size_t block_stride = 0) {
  PR_ASSIGN_OR_RETURN(const Candidate* candidate,
                      chooseCandidate(impl, collective, root, block_count * dataTypeSize(dtype), in_place));
  Operation operation;
  operation.plan = candidate->plans[static_cast<std::size_t>(in_place)];
  operation.algorithm = candidate->algorithm;
  operation.dtype = dtype;
  operation.op = op;
  operation.send = send;
  operation.recv = recv;
  operation.count = block_count;
  operation.block_stride = block_stride;
  PR_TRACE(impl.rank, "%s %zu x %s via %s", call, block_count, std::string(dataTypeName(dtype)).c_str(),
           operation.plan->description.c_str());
  return submitOperation(impl, operation, stream, call);
}

}  // namespace

Status attachPlanFile(Communicator::Impl& impl, Collective collective, int root, PlanChoice& choice) {
  const std::shared_ptr<const UserPlan>& user = impl.user_plan;
  if (!user || user->collective() != collective) return Status::ok();
  if (collective == Collective::kBroadcast && user->text.plan.root != root) return Status::ok();
  for (const auto& plan : user->candidate.plans) {
    if (plan) PR_RETURN_IF_ERROR(impl.transport->preparePlan(plan));
  }
  choice.user = user;
  return Status::ok();
}

StatusOr<SelectionReport> Communicator::explainSelection(Collective collective, std::size_t count, DataType dtype,
                                                         int root) {
  Impl& impl = *impl_;
  if (!isValidCollective(collective)) {
    return invalidArgumentError("unknown collective value " + std::to_string(static_cast<int>(collective)));
  }
  if (collective == Collective::kAllReduce) return explainSelection(count, dtype);
  if (!isValidDataType(dtype)) {
    return invalidArgumentError("unknown dtype value " + std::to_string(static_cast<int>(dtype)));
  }
  if (root < 0 || root >= impl.size) {
    return invalidArgumentError("root " + std::to_string(root) + " outside 0.." + std::to_string(impl.size - 1));
  }
  const std::size_t elem = dataTypeSize(dtype);
  if (count > std::numeric_limits<std::size_t>::max() / elem / static_cast<std::size_t>(impl.size)) {
    return invalidArgumentError("count " + std::to_string(count) + " x " + std::to_string(impl.size) + " ranks x " +
                                std::to_string(elem) + "-byte " + std::string(dataTypeName(dtype)) +
                                " overflows the address space");
  }
  const int plan_root = collective == Collective::kBroadcast ? root : 0;  // only broadcast's plans have one
  PR_RETURN_IF_ERROR(chooseCandidate(impl, collective, plan_root, count * elem).status());
  const PlanChoice& choice = choiceOf(impl, collective, plan_root);
  // Forced only where the collective has the algorithm the settings name (PEERREDUCE_ALGO may not apply).
  SelectionReport report =
      choice.report(count, elem, choice.candidateOf(forcedAlgorithm(impl.config, collective)) != nullptr);
  PR_ASSIGN_OR_RETURN(report.kernel_blocks,
                      firstSegmentKernelBlocks(*impl.transport, choice.choose(count * elem).plans[0], count, elem,
                                               impl.config.scratch_bytes));
  return report;
}

Status Communicator::reduceScatter(const void* send, void* recv, std::size_t recvcount, DataType dtype, ReduceOp op,
                                   StreamHandle stream) {
  Impl& impl = *impl_;
  if (aborted()) return abortedCall(impl, "reduceScatter");
  PR_RETURN_IF_ERROR(checkReduceScatterArguments(send, recv, recvcount, dtype, op, impl.rank, impl.size));
  if (recvcount == 0) return Status::ok();
  const bool in_place = recv == static_cast<const std::byte*>(send) +
                                    recvcount * dataTypeSize(dtype) * static_cast<std::size_t>(impl.rank);
  return submitCollective(impl, Collective::kReduceScatter, 0, send, recv, recvcount, dtype, op, in_place, stream,
                          "reduceScatter");
}

Status Communicator::allGather(const void* send, void* recv, std::size_t sendcount, DataType dtype,
                               StreamHandle stream) {
  Impl& impl = *impl_;
  if (aborted()) return abortedCall(impl, "allGather");
  PR_RETURN_IF_ERROR(checkAllGatherArguments(send, recv, sendcount, dtype, impl.rank, impl.size));
  if (sendcount == 0) return Status::ok();
  const bool in_place = send == static_cast<const std::byte*>(recv) +
                                    sendcount * dataTypeSize(dtype) * static_cast<std::size_t>(impl.rank);
  // No arithmetic: the op is never applied (kSum keeps every request well formed).
  return submitCollective(impl, Collective::kAllGather, 0, send, recv, sendcount, dtype, ReduceOp::kSum, in_place,
                          stream, "allGather");
}

Status Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                               StreamHandle stream) {
  Impl& impl = *impl_;
  if (aborted()) return abortedCall(impl, "broadcast");
  PR_RETURN_IF_ERROR(checkBroadcastArguments(send, recv, count, dtype, root, impl.rank, impl.size));
  if (count == 0) return Status::ok();
  // Other ranks' send is never read (their programs do not touch it), whatever they passed.
  const bool in_place = send == recv;
  return submitCollective(impl, Collective::kBroadcast, root, send, recv, count, dtype, ReduceOp::kSum, in_place,
                          stream, "broadcast");
}

namespace {

// The strided forms' callers are the library's own (a communicator across machines), so a bad stride
// is its bug, reported as such rather than run.
Status checkStride(const Communicator::Impl& impl, const char* call, std::size_t count, std::size_t block_stride,
                   const void* send, const void* recv) {
  if (send == nullptr || recv == nullptr) {
    return internalError(std::string(call) + " on rank " + std::to_string(impl.rank) + ": a null buffer");
  }
  if (block_stride < count) {
    return internalError(std::string(call) + " on rank " + std::to_string(impl.rank) + ": block stride " +
                         std::to_string(block_stride) + " below the block's " + std::to_string(count) + " elements");
  }
  return Status::ok();
}

}  // namespace

Status reduceScatterStrided(Communicator& comm, const void* send, void* recv, std::size_t count,
                            std::size_t block_stride, DataType dtype, ReduceOp op, StreamHandle stream) {
  Communicator::Impl& impl = CommunicatorAccess::impl(comm);
  if (comm.aborted()) return abortedCall(impl, "reduceScatter");
  if (count == 0) return Status::ok();
  PR_RETURN_IF_ERROR(checkStride(impl, "reduceScatter", count, block_stride, send, recv));
  const bool in_place = recv == static_cast<const std::byte*>(send) +
                                    block_stride * dataTypeSize(dtype) * static_cast<std::size_t>(impl.rank);
  return submitCollective(impl, Collective::kReduceScatter, 0, send, recv, count, dtype, op, in_place, stream,
                          "reduceScatter", block_stride);
}

Status allGatherStrided(Communicator& comm, const void* send, void* recv, std::size_t count, std::size_t block_stride,
                        DataType dtype, StreamHandle stream) {
  Communicator::Impl& impl = CommunicatorAccess::impl(comm);
  if (comm.aborted()) return abortedCall(impl, "allGather");
  if (count == 0) return Status::ok();
  PR_RETURN_IF_ERROR(checkStride(impl, "allGather", count, block_stride, send, recv));
  const bool in_place = send == static_cast<const std::byte*>(recv) +
                                    block_stride * dataTypeSize(dtype) * static_cast<std::size_t>(impl.rank);
  return submitCollective(impl, Collective::kAllGather, 0, send, recv, count, dtype, ReduceOp::kSum, in_place, stream,
                          "allGather", block_stride);
}

}  // namespace peerreduce
