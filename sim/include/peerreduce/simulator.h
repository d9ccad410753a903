// The deterministic multi-GPU simulator, behind the same Transport interface as the GPUs.
//
// A SimWorld holds N virtual GPUs in host memory. Plans submitted through its transports run when
// every rank synchronizes (or when runUntilIdle() is called by a single driving thread): one seeded
// scheduler then picks which rank executes its next step, so every seed is one interleaving, and the
// same seed is the same interleaving on every machine. Time is virtual (alpha-beta per link, the same
// TimingModel the selector uses); no wall clock is read. A happens-before checker (vector clocks)
// reports any access to a rank's memory that is not ordered after the write it depends on, or that a
// later write is not ordered after. Execution can be recorded as a Chrome trace (opens in Perfetto).
//
// Implemented in the peerreduce_sim library.
//
// Example (one thread driving four ranks; creation needs the ranks' threads, see tests/harness):
//   auto world = peerreduce::sim::SimWorld::create(4, {.seed = 7}).value();
//   ... comms[r]->allreduce(...) for every r ...
//   PR_RETURN_IF_ERROR(world->runUntilIdle());
//
// Thread safety: transports and bootstraps of one world may be used from different threads (one per
// rank); runUntilIdle() and the inspection calls from one thread while no rank is inside synchronize.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "peerreduce/transport.h"

namespace peerreduce::sim {

struct SimOptions {
  std::uint64_t seed = 1;
  // Links and device model; a topology of world size 0 means Topology::fullMesh(world size).
  Topology topology;
  // Check happens-before on every access to symmetric memory (costs some speed).
  bool race_checking = true;
  // Record every step for chromeTraceJson() (costs memory proportional to steps executed).
  bool record_trace = false;
  // A wait that is not satisfied within this much virtual time ends its operation with kTimeout.
  double wait_timeout_us = 10e6;
};

struct SimStats {
  std::uint64_t operations = 0;           // plan executions completed, all ranks
  std::uint64_t steps = 0;                // steps executed, all ranks
  double virtual_time_us = 0.0;           // latest rank clock
  std::vector<double> rank_time_us;       // per rank clock
  std::vector<std::uint64_t> link_bytes;  // n x n, [from * n + to]: bytes rank `from` moved in `to`'s memory
  // With a trace recorded: events beyond the trace's limit (1,000,000), left out of the trace file.
  std::uint64_t trace_events_dropped = 0;
};

// Faults in virtual time, for fault injection (the campaign's scenarios, fault tests). Every call
// takes effect at the rank's current virtual time and is part of the seeded run.
class SimFaults {
 public:
  virtual ~SimFaults() = default;
  // Stops (or restores) the direct link from -> to: steps over it fail as a dead link would.
  virtual void setLinkDown(int from, int to, bool down) = 0;
  // Every signal from -> to arrives delay_us of virtual time late.
  virtual void setSignalDelay(int from, int to, double delay_us) = 0;
  // Deschedules `rank` for stall_us of virtual time, then it goes on.
  virtual void stallRank(int rank, double stall_us) = 0;
  // `rank` stops for good after `actions` more actions (0: at once), as a crashed GPU would.
  virtual void haltRank(int rank, std::uint64_t actions) = 0;
  // `rank`'s next step that copies through pinned host memory (over a host-staged link) takes stall_us
  // longer, as a host copy stuck behind other traffic would.
  virtual void stallHostCopy(int rank, double stall_us) = 0;
};

class SimEngine;

class SimWorld {
 public:
  static StatusOr<std::shared_ptr<SimWorld>> create(int world_size, SimOptions options = {});
  ~SimWorld();

  int worldSize() const;
  const SimOptions& options() const;

  std::shared_ptr<Transport> transport(int rank) const;
  std::shared_ptr<Bootstrap> bootstrap(int rank) const;

  // Runs everything every rank has submitted, to completion or failure. For a single thread that
  // drives all ranks (the ranks' own synchronize() must not be in use at the same time).
  Status runUntilIdle();

  SimStats stats() const;
  // Every happens-before violation seen so far, one line each (empty when the plans are correct).
  std::vector<std::string> raceReports() const;
  // Hash of the executed schedule (rank, step, virtual time of every step in order): equal fingerprints
  // mean the same interleaving with the same timing.
  std::uint64_t traceFingerprint() const;
  // Chrome trace-event JSON of the recorded steps (needs record_trace).
  std::string chromeTraceJson() const;
  Status writeChromeTrace(const std::string& path) const;

  // Rank `rank`'s symmetric region as the host addresses it (simulated device memory is host memory),
  // null before its transport opened it. For inspection by tests and tools.
  std::byte* hostRegion(int rank) const;

  // Drops recorded statistics, races and trace (memory, epochs and clocks stay).
  void resetStats();

  // Fault injection in virtual time (see SimFaults).
  SimFaults& faults() const;

 private:
  SimWorld() = default;
  std::shared_ptr<SimEngine> engine_;
  std::vector<std::shared_ptr<Transport>> transports_;
  std::vector<std::shared_ptr<Bootstrap>> bootstraps_;
};

}  // namespace peerreduce::sim
