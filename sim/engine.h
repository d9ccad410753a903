// SimEngine: the simulated world behind SimWorld and its transports.
//
// State per rank: its symmetric region (host memory), its flag counters (one per writer and flag id,
// each with the virtual arrival time and vector clock of every signal not yet consumed), its queue of
// submitted operations, its epoch bases, its virtual clock and its first error.
//
// run(): repeatedly lists the ranks whose next action can proceed (a data step or signal always can;
// a wait or entry-fence check when the awaited counter is high enough) and lets the seeded PRNG pick
// one. When none can proceed but work remains, virtual time jumps to the earliest wait deadline and
// that rank's operation ends with kTimeout (naming rank, peer, flag and step); so a run always ends.
//
// Thread safety: every public method takes the engine mutex, except abort(), which only sets an atomic
// (a rank waiting in synchronize polls it, so abort wakes it within kAbortPollInterval).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "op_agreement.h"
#include "peerreduce/simulator.h"
#include "peerreduce/transport.h"
#include "plan/flag_epochs.h"
#include "prng.h"
#include "race_checker.h"
#include "region_memory.h"
#include "select/timing_model.h"
#include "trace.h"

namespace peerreduce::sim {

class SimEngine final : public SimFaults {
 public:
  SimEngine(int world_size, SimOptions options);
  ~SimEngine();

  int worldSize() const { return world_size_; }
  const SimOptions& options() const { return options_; }
  std::uint64_t worldId() const { return world_id_; }

  StatusOr<std::vector<std::byte>> openSymmetric(int rank, std::size_t bytes);
  // The links `rank`'s communicator agreed on and its pinned pool (LinkAdoption; engine_links.cc): from
  // now on the rank's steps are priced and checked on `agreed`, and its data over host-staged links passes
  // through blocks of `staging`. kInvalidArgument for a topology of another size or a null pool, and
  // while the rank has operations queued.
  Status adoptLinks(int rank, const Topology& agreed, std::shared_ptr<PinnedHostPool> staging);
  Status connectPeers(int rank, const std::vector<std::vector<std::byte>>& records);
  // The machine's links, with the pairs that fell back to host staging as host-staged (engine_links.cc).
  Topology topology() const;
  // ProbeFallback on the simulator (engine_links.cc), which has no access probe of its own (the fault
  // injector supplies failed probes): `rank`'s region and connection are torn down, so openSymmetric and
  // connectPeers run again, and `pairs` (world x world) are host-staged links with `host_link`'s figures
  // from now on. kInvalidArgument for a matrix of the wrong size or while the rank has operations queued.
  Status fallBackToHostStaging(int rank, const std::vector<std::uint8_t>& pairs, const LinkInfo& host_link);
  // `rank`'s symmetric region (host memory), null before openSymmetric. Defined in engine_region.cc.
  std::byte* regionOf(int rank);

  Status submit(int rank, const ExecutionRequest& request);
  // Collective on the simulator: returns when every rank has called it and the submitted work ran.
  Status synchronize(int rank, std::chrono::milliseconds timeout);
  Status runUntilIdle();
  Status asyncError(int rank) const;
  void abort(int rank);

  // Fault hooks (engine_faults.cc), used by the fault injector (lib/faults) through SimFaultHooks.
  // A dead link fails the first step that crosses it with kLinkDown naming the link and the step;
  // a delay adds virtual latency to every signal from `from` to `to`; a stall adds virtual time to a
  // rank's clock before its next action; a halt lets a rank execute `actions` more actions and then
  // never again (a crash in the middle of an operation).
  void setLinkDown(int from, int to, bool down) override;
  void setSignalDelay(int from, int to, double delay_us) override;
  void stallRank(int rank, double stall_us) override;
  void haltRank(int rank, std::uint64_t actions) override;
  void stallHostCopy(int rank, double stall_us) override;
  // The simulator's failure detector (a model of heartbeats over each link): `peer` is kLost once it
  // halted, kLinkDown when the link between it and `rank` is down in either direction, else kAlive.
  PeerHealth peerHealth(int rank, int peer) const;

  // Time marks (Transport::reserveTimeMarks / markTime / markedSpanUs) in virtual time: a mark is
  // reached when the rank finishes the operation queued before it (at once on an idle rank).
  Status reserveTimeMarks(int rank, std::size_t count);
  StatusOr<bool> markTime(int rank, std::size_t mark);
  StatusOr<std::optional<double>> markedSpanUs(int rank, std::size_t from, std::size_t to) const;

  SimStats stats() const;
  std::vector<std::string> raceReports() const;
  std::uint64_t traceFingerprint() const;
  std::string chromeTraceJson() const;
  void resetStats();

 private:
  struct Arrival {
    double time_us = 0.0;
    VectorClock clock;  // sender's clock (empty without race checking)
    std::uint64_t trace_id = 0;
  };
  struct Counter {
    std::uint64_t count = 0;
    std::uint64_t first_kept = 1;  // signal number of arrivals.front()
    std::deque<Arrival> arrivals;
  };
  struct Operation {
    ExecutionRequest request;
    std::uint64_t seq = 0;
    std::size_t slot_bytes = 0;
    bool fenced = false;                   // the entry fence has been passed
    std::size_t pc = 0;                    // next step
    double wait_start_us = -1.0;           // virtual time this rank began the wait it is blocked on
    std::vector<std::size_t> marks_after;  // time marks reached when this operation finishes
    // A batch (ExecutionRequest::batch, copied): the plan runs on its buffers laid end to end in
    // packed_input / packed_output (request.send / recv point there), filled from the items when the
    // operation starts and copied back into them when it finishes (engine_batch.cc).
    std::vector<BatchItem> batch;
    std::vector<std::byte> packed_input;
    std::vector<std::byte> packed_output;
  };
  struct RankState {
    RegionMemory memory;
    std::size_t memory_bytes = 0;
    bool connected = false;
    std::deque<Operation> queue;
    std::unique_ptr<FlagEpochs> epochs;
    std::unique_ptr<PhaseTimer> phase;
    double clock_us = 0.0;
    std::uint64_t next_seq = 0;
    Status error;
    std::atomic<bool> aborted{false};
    std::vector<double> mark_times;  // virtual time each mark was reached; NaN while pending
    // Adopted links (adoptLinks): null until then, and the machine's topology applies.
    std::unique_ptr<Topology> links;
    std::unique_ptr<TimingModel> timing;
    std::shared_ptr<PinnedHostPool> staging;
    std::vector<PinnedBlock> staged;  // the blocks of the step being executed, returned after it
  };
  enum class Readiness { kReady, kBlocked, kIdle };
  // Injected faults (engine_faults.cc); `any` keeps the fault-free path to one branch.
  struct FaultState {
    bool any = false;
    std::vector<char> link_down;             // n x n, [from * n + to]
    std::vector<double> signal_delay;        // n x n, extra virtual latency of signals
    std::vector<double> stall_us;            // per rank, added to its clock before its next action
    std::vector<std::int64_t> actions_left;  // per rank, -1: not halted
    std::vector<double> host_copy_stall_us;  // per rank, added to its clock at its next host-staged copy
  };
  void ensureFaultState();
  bool halted(int rank) const;
  // Applies stalls and halts before `rank` acts; fails the operation on a dead link. True when the
  // rank must not execute `s` now.
  bool faultBeforeStep(int rank, Operation& op, const Step& s);
  double extraSignalDelay(int from, int to) const;

  Counter& counter(int holder, int writer, int flag);
  Readiness readiness(int rank);
  // The entry fence's unsatisfied peer, or -1 when every peer's done counter is high enough.
  int fenceBlocker(int rank);
  void passFence(int rank, Operation& op);
  void step(int rank);
  // False when the step failed (the rank's operation failed with it).
  bool executeData(int rank, Operation& op, const Step& step);
  void finishOperation(int rank);
  // Batches (engine_batch.cc): the request's batch is well formed; the operation takes a copy of it and
  // its packed buffers; packing at the start and unpacking at the end.
  Status checkBatch(int rank, const ExecutionRequest& request) const;
  static void adoptBatch(Operation& op, std::size_t elem);
  static void packBatch(Operation& op, std::size_t elem);
  static void unpackBatch(const Operation& op, std::size_t elem);
  void failRank(int rank, Status status);
  void timeoutEarliestWait();
  std::byte* resolve(int rank, const Operation& op, const BufferRef& ref, int chunk);
  // Whether `rank`'s program of `plan` reads its send buffer (else the caller may pass none).
  static bool readsSend(const Plan& plan, int rank);
  std::string describeSite(const AccessSite& site) const;
  Status checkLinks(int rank, const RankProgram& program) const;
  // Links as `rank` uses them (engine_links.cc): its adopted links, else the machine's. A link is usable
  // when the rank's links have it and the machine can carry it: a direct link needs the machine's,
  // a host-staged one only host memory.
  const Topology& linksOf(int rank) const;
  const TimingModel& timingOf(int rank) const;
  bool linkUsable(int rank, int peer) const;
  bool hostStaged(int rank, int peer) const;
  // Moves each source and the destination of data step `s` that lies across a host-staged link through a
  // block of the rank's staging pool (copied in before the step, out after it: stageOut). False when the
  // pool refused (the rank's operation then failed with its kOutOfMemory).
  bool stageIn(int rank, Operation& op, const Step& s, std::size_t bytes, std::byte*& dst);
  void stageOut(int rank, std::byte* staged_dst, std::byte* real_dst, std::size_t bytes);
  Status runLocked();
  // Waits in synchronize until the round of `generation` is over; false at the deadline or on abort.
  bool waitForRound(std::unique_lock<std::mutex>& lock, int rank, std::uint64_t generation,
                    std::chrono::steady_clock::time_point deadline);

  // How often a rank waiting in synchronize checks its abort flag: prompt for a person, and a waiting
  // thread that wakes 100 times a second costs nothing measurable.
  static constexpr std::chrono::milliseconds kAbortPollInterval{10};

  const int world_size_;
  const SimOptions options_;
  const std::uint64_t world_id_;
  Topology topology_;
  std::vector<std::uint8_t> fallen_back_;  // n x n once a pair fell back to host staging; empty before
  LinkInfo fallback_link_;                 // the figures those pairs get
  TimingModel timing_;
  Prng prng_;
  std::vector<std::unique_ptr<RankState>> ranks_;
  std::vector<Counter> counters_;  // (holder * n + writer) * kMaxFlags + flag
  RaceChecker races_;
  OperationAgreement agreement_;  // every rank's k-th operation must be the same allreduce
  TraceRecorder trace_;
  SimStats stats_;
  FaultState faults_;
  std::vector<std::uint64_t> link_scratch_;
  std::vector<const void*> sources_;     // reused per reduce step: the hot path allocates nothing
  std::vector<std::uint8_t> from_send_;  // per source of that step: 1 where it is the send buffer (kInput)
  std::uint64_t next_trace_id_ = 1;
  // Per rank, the plans of its recent operations, kept so race reports can describe their steps.
  static constexpr std::size_t kRecentPlans = 16;
  std::vector<std::deque<std::pair<std::uint64_t, std::shared_ptr<const Plan>>>> recent_plans_;

  mutable std::mutex mutex_;
  std::condition_variable sync_cv_;
  std::vector<bool> in_sync_;
  int sync_count_ = 0;
  std::uint64_t sync_generation_ = 0;
};

}  // namespace peerreduce::sim
