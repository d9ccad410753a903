// Communicator: creation (agreement, symmetric memory, plans, selector) and the allreduce path.
// The pool and the memory API are in communicator_memory.cc.
#include "peerreduce/communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>

#include "algorithms/algorithms.h"
#include "algorithms/plan_cache.h"
#include "api/argument_checks.h"
#include "api/communicator_impl.h"
#include "api/kernel_blocks.h"
#include "api/operation_submit.h"
#include "api/symmetric_exchange.h"
#include "api/topology_agreement.h"
#include "bootstrap/rank_agreement.h"
#include "select/builtin_tuning.h"
#include "select/segmenting.h"
#include "util/log.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

// What every rank sends at creation, so ranks built with different settings find out before they
// exchange memory. Fixed layout; compared field by field.
struct CreationRecord {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t rank;
  std::int32_t size;
  std::uint64_t config_fingerprint;
};
constexpr std::uint32_t kCreationMagic = 0x50524331;  // "PRC1"
constexpr std::uint32_t kCreationVersion = 1;

Status agreeOnCreation(const Communicator::Impl& impl) {
  CreationRecord mine{kCreationMagic, kCreationVersion, impl.rank, impl.size, impl.config.fingerprint()};
  PR_ASSIGN_OR_RETURN(const std::vector<CreationRecord> all, agreementOf(impl).gather(mine));
  for (int r = 0; r < impl.size; ++r) {
    const CreationRecord& other = all[static_cast<std::size_t>(r)];
    const std::string who = "rank " + std::to_string(r);
    if (other.magic != kCreationMagic || other.version != kCreationVersion) {
      return mismatchError(who + " runs an incompatible peerreduce (creation record version " +
                           std::to_string(other.version) + ", expected " + std::to_string(kCreationVersion) + ")");
    }
    if (other.rank != r) {
      return mismatchError(who + " calls itself rank " + std::to_string(other.rank) +
                           "; every rank must pass its own rank");
    }
    if (other.size != impl.size) {
      return mismatchError(who + " was created with world size " + std::to_string(other.size) + ", rank " +
                           std::to_string(impl.rank) + " with " + std::to_string(impl.size));
    }
    if (other.config_fingerprint != mine.config_fingerprint) {
      return mismatchError(who + " uses a different configuration than rank " + std::to_string(impl.rank) + " (" +
                           impl.config.describe() + " here); set the same PEERREDUCE_* values on every rank");
    }
  }
  return Status::ok();
}

// The operation log (api/operation_log.h): rank 0 makes the segment, every other rank maps it by name, and
// the log is kept only where every rank mapped it (ranks on several machines share no host memory: they
// run without it, as does a world where shared memory cannot be made). All ranks decide alike.
struct OperationLogName {
  char name[kMaxSharedNameBytes];
};

Status openOperationLog(Communicator::Impl& impl) {
  if (!impl.config.check_operations || impl.size < 2 || impl.transport->identity().compares_operations) {
    return Status::ok();
  }
  const RankAgreement agreement = agreementOf(impl);
  std::unique_ptr<OperationLog> log;
  OperationLogName mine{};
  if (impl.rank == 0) {
    auto created = OperationLog::create(impl.rank, impl.size);
    if (created.isOk()) {
      log = std::move(created).value();
      std::snprintf(mine.name, sizeof(mine.name), "%s", log->name().c_str());
    } else {
      PR_INFO(impl.rank, "operations are not compared across ranks: %s", created.status().toString().c_str());
    }
  }
  PR_ASSIGN_OR_RETURN(const std::vector<OperationLogName> names, agreement.gather(mine));
  const std::string name(names[0].name, strnlen(names[0].name, sizeof(names[0].name)));
  if (impl.rank != 0 && !name.empty()) {
    auto opened = OperationLog::open(impl.rank, impl.size, name);
    if (opened.isOk()) log = std::move(opened).value();
  }
  const std::int32_t have = log ? 1 : 0;
  PR_ASSIGN_OR_RETURN(const std::vector<std::int32_t> everyone, agreement.gather(have));
  const bool all = std::all_of(everyone.begin(), everyone.end(), [](std::int32_t h) { return h == 1; });
  if (!all) {
    if (have == 1) {
      PR_INFO(impl.rank, "operations are not compared across ranks: not every rank maps this machine's shared memory");
    }
    return Status::ok();
  }
  // Every rank mapped it: the name can go (the pages stay while mapped).
  PR_RETURN_IF_ERROR(log->unlink());
  // A transport that reads the rank's stop word stops at once when a peer refuses an operation this
  // rank launched; one that cannot keeps its deadline (not an error: the mismatch is reported either way).
  if (StopWordAdoption* stop = impl.transport->capabilities().stop_word_adoption) {
    const Status adopted = stop->adoptStopWord(log->keepAlive(), log->stopWord(impl.rank));
    if (!adopted.isOk()) {
      PR_INFO(impl.rank, "a refused operation ends this rank's waits at their deadline: %s",
              adopted.toString().c_str());
    }
  }
  impl.operation_log = std::move(log);
  return Status::ok();
}

Status loadTuning(Communicator::Impl& impl) {
  if (impl.config.tuning_file.empty()) {
    impl.tuning = builtinTuningTable();  // measured choices for the devices peerreduce was benchmarked on
    return Status::ok();
  }
  auto table = TuningTable::load(impl.config.tuning_file);
  if (!table.isOk()) return table.status();
  impl.tuning = std::move(table).value();
  return Status::ok();
}

Status loadPlanFile(Communicator::Impl& impl) {
  PR_ASSIGN_OR_RETURN(auto user, loadUserPlan(impl.config, impl.size, impl.topology,
                                              impl.tuning ? &*impl.tuning : nullptr, impl.architecture));
  if (user) impl.user_plan = std::make_shared<const UserPlan>(std::move(*user));
  return Status::ok();
}

Status buildPlans(Communicator::Impl& impl) {
  PR_ASSIGN_OR_RETURN(CandidateSet set,
                      buildCandidates(impl.size, impl.topology, impl.config.verify_plans, impl.config.algorithm));
  impl.allreduce.excluded = set.excluded;
  for (const std::string& why : set.excluded) PR_INFO(impl.rank, "not usable here: %s", why.c_str());
  if (set.candidates.empty()) {
    if (impl.config.algorithm != Algorithm::kAuto) {
      return invalidArgumentError("the configured algorithm " + std::string(algorithmName(impl.config.algorithm)) +
                                  " cannot run on this topology (" + impl.topology.describe() + ": " +
                                  (set.excluded.empty() ? std::string("no plan") : set.excluded.front()) +
                                  "); unset PEERREDUCE_ALGO or pick another");
    }
    return unavailableError("no allreduce algorithm can run on this topology (" + impl.topology.describe() + ")");
  }
  std::vector<SelectorCandidate> selectable;
  for (const Candidate& c : set.candidates) {
    for (const auto& plan : c.plans) PR_RETURN_IF_ERROR(impl.transport->preparePlan(plan));
    selectable.push_back({c.plans[0]});
  }
  impl.allreduce.candidates = std::move(set.candidates);
  PR_RETURN_IF_ERROR(attachPlanFile(impl, Collective::kAllReduce, 0, impl.allreduce));
  SelectorTuning tuning;
  if (impl.tuning) tuning = SelectorTuning{&*impl.tuning, impl.architecture};
  PR_ASSIGN_OR_RETURN(impl.allreduce.selector,
                      AlgorithmSelector::create(selectable, impl.topology, impl.config.scratch_bytes, tuning));
  return Status::ok();
}

Status createImpl(Communicator::Impl& impl) {
  PR_RETURN_IF_ERROR(impl.config.validate());
  PR_RETURN_IF_ERROR(agreeOnCreation(impl));
  PR_RETURN_IF_ERROR(openOperationLog(impl));
  // Settings are agreed by now, so every rank gets the same outcome (and the same pool).
  PR_RETURN_IF_ERROR(createPool(impl));
  PR_RETURN_IF_ERROR(exchangeSymmetricMemory(impl));
  const Topology local = impl.transport->topology();
  if (local.worldSize() != impl.size) {
    return internalError(impl.transport->name() + " reports a topology of " + std::to_string(local.worldSize()) +
                         " ranks for a world of " + std::to_string(impl.size));
  }
  PR_ASSIGN_OR_RETURN(AgreedTopology agreed,
                      agreeOnTopology(impl.rank, impl.size, local, impl.transport->identity().architecture,
                                      *impl.bootstrap, impl.config));
  impl.topology = std::move(agreed.topology);
  impl.architecture = std::move(agreed.architecture);
  const RankAgreement agreement = agreementOf(impl);
  PR_RETURN_IF_ERROR(agreement.outcome(adoptAgreedLinks(*impl.transport, impl.rank, local, impl.topology, impl.pinned),
                                       "take the agreed links"));
  PR_RETURN_IF_ERROR(agreement.outcome(loadTuning(impl), "read the tuning table (PEERREDUCE_TUNING_FILE)"));
  PR_RETURN_IF_ERROR(agreement.sameValue(impl.tuning ? impl.tuning->fingerprint() : 0,
                                         "tuning table (PEERREDUCE_TUNING_FILE contents)"));
  PR_RETURN_IF_ERROR(agreement.outcome(loadPlanFile(impl), "read and verify its plan file (PEERREDUCE_PLAN_FILE)"));
  PR_RETURN_IF_ERROR(
      agreement.sameValue(impl.user_plan ? impl.user_plan->text_hash : 0, "plan (PEERREDUCE_PLAN_FILE contents)"));
  PR_RETURN_IF_ERROR(agreement.outcome(buildPlans(impl), "build and verify its plans"));
  PR_INFO(impl.rank, "communicator ready: %d ranks over %s, %s; %s", impl.size, impl.transport->name().c_str(),
          impl.topology.describe().c_str(), impl.config.describe().c_str());
  return Status::ok();
}

}  // namespace

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

StatusOr<std::unique_ptr<Communicator>> Communicator::create(int rank, int size, std::shared_ptr<Bootstrap> bootstrap,
                                                             std::shared_ptr<Transport> transport,
                                                             const Config& config) {
  try {
    if (size < 1 || size > kMaxWorldSize) {
      return invalidArgumentError("world size " + std::to_string(size) + " is outside 1.." +
                                  std::to_string(kMaxWorldSize));
    }
    if (rank < 0 || rank >= size) {
      return invalidArgumentError("rank " + std::to_string(rank) + " is outside 0.." + std::to_string(size - 1) +
                                  " for a world of " + std::to_string(size));
    }
    if (!bootstrap) return invalidArgumentError("rank " + std::to_string(rank) + ": bootstrap is null");
    if (!transport) return invalidArgumentError("rank " + std::to_string(rank) + ": transport is null");
    if (bootstrap->rank() != rank || bootstrap->size() != size) {
      return invalidArgumentError("rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                  " was given the bootstrap of rank " + std::to_string(bootstrap->rank()) + " of " +
                                  std::to_string(bootstrap->size()));
    }
    if (transport->rank() != rank || transport->worldSize() != size) {
      return invalidArgumentError("rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                  " was given the transport of rank " + std::to_string(transport->rank()) + " of " +
                                  std::to_string(transport->worldSize()));
    }
    auto impl = std::make_unique<Impl>();
    impl->rank = rank;
    impl->size = size;
    impl->config = config;
    impl->bootstrap = std::move(bootstrap);
    impl->transport = std::move(transport);
    PR_RETURN_IF_ERROR(createImpl(*impl));
    return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
  } catch (const std::bad_alloc&) {
    return outOfMemoryError("rank " + std::to_string(rank) + ": out of host memory while creating the communicator");
  } catch (const std::exception& e) {
    return internalError("rank " + std::to_string(rank) +
                         ": unexpected exception while creating the communicator: " + e.what());
  }
}

namespace {

Status abortedStatus(const Communicator::Impl& impl, const char* what) {
  return abortedError("rank " + std::to_string(impl.rank) + ": " + what +
                      " on a communicator that was aborted; destroy it and create a new one");
}

}  // namespace

void Communicator::abort() {
  impl_->aborted.store(true, std::memory_order_release);
  impl_->transport->abort();
}

bool Communicator::aborted() const { return impl_->aborted.load(std::memory_order_acquire); }

Status Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                               StreamHandle stream) {
  Impl& impl = *impl_;
  if (aborted()) return abortedStatus(impl, "allreduce");
  PR_RETURN_IF_ERROR(checkAllreduceArguments(send, recv, count, dtype, op, impl.rank));
  if (count == 0) return Status::ok();
  const std::size_t elem = dataTypeSize(dtype);
  const bool in_place = send == recv;
  const Candidate& candidate = impl.allreduce.choose(count * elem, in_place);
  const Algorithm algorithm = candidate.algorithm;
  const std::shared_ptr<const Plan>& plan = candidate.plans[static_cast<std::size_t>(in_place)];
  PR_ASSIGN_OR_RETURN(const OperationChannel where, operationChannel(impl, stream));
  // The copy pins the scratch in place until the segments are submitted.
  PR_ASSIGN_OR_RETURN(const PoolBlock scratch, leaseScratch(impl, where.channel));
  const std::size_t segment = maxSegmentCount(*plan, elem, scratch.size());
  if (segment == 0) {
    return outOfMemoryError("allreduce on rank " + std::to_string(impl.rank) + ": " +
                            std::string(algorithmName(algorithm)) + " needs " + std::to_string(plan->scratch_slots) +
                            " scratch slots but only " + std::to_string(scratch.size()) +
                            " bytes of scratch exist (preferred " + std::to_string(impl.config.scratch_bytes) +
                            "); raise PEERREDUCE_SCRATCH_BYTES, or free symmetric pool blocks");
  }
  PR_TRACE(impl.rank, "allreduce %zu x %s %s via %s in %zu segment(s)", count, std::string(dataTypeName(dtype)).c_str(),
           std::string(reduceOpName(op)).c_str(), std::string(algorithmName(algorithm)).c_str(),
           (count + segment - 1) / segment);
  Operation operation;
  operation.plan = plan;
  operation.algorithm = algorithm;
  operation.dtype = dtype;
  operation.op = op;
  operation.send = send;
  operation.recv = recv;
  operation.count = count;
  return submitOperation(impl, operation, where, scratch, segment, stream);
}

Status Communicator::synchronize(StreamHandle stream) {
  if (aborted()) return abortedStatus(*impl_, "synchronize");
  const Status done = impl_->transport->synchronize(stream, impl_->config.timeout);
  // A wait that ended because another rank refused the operation reports why.
  return impl_->operation_log ? impl_->operation_log->explain(done) : done;
}

Status Communicator::asyncError() const {
  if (aborted()) return abortedStatus(*impl_, "the operations were ended");
  const Status error = impl_->transport->asyncError();
  return impl_->operation_log ? impl_->operation_log->explain(error) : error;
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }
const Config& Communicator::config() const { return impl_->config; }
const Topology& Communicator::topology() const { return impl_->topology; }

StatusOr<SelectionReport> Communicator::explainSelection(std::size_t count, DataType dtype) const {
  if (!isValidDataType(dtype)) {
    return invalidArgumentError("unknown dtype value " + std::to_string(static_cast<int>(dtype)));
  }
  const std::size_t elem = dataTypeSize(dtype);
  // allreduce() rejects such a count; choosing for the wrapped byte count would report a wrong choice.
  if (count > std::numeric_limits<std::size_t>::max() / elem) {
    return invalidArgumentError("count " + std::to_string(count) + " x " + std::to_string(elem) + "-byte " +
                                std::string(dataTypeName(dtype)) + " overflows the address space");
  }
  SelectionReport report = impl_->allreduce.report(count, elem, impl_->config.algorithm != Algorithm::kAuto);
  PR_ASSIGN_OR_RETURN(report.kernel_blocks,
                      firstSegmentKernelBlocks(*impl_->transport, impl_->allreduce.choose(count * elem).plans[0], count,
                                               elem, impl_->config.scratch_bytes));
  return report;
}

}  // namespace peerreduce
