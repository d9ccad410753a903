// TimingModel: the alpha-beta cost of plan steps on a topology.
//
// Shared by the cost model that the selector uses (PlanCost) and by the simulator's virtual clock, so
// that what the simulator measures in virtual time is exactly what the selector predicted; a
// difference between them means one of the two executed the plan differently.
//
// A GPU runs a rank's consecutive copy/reduce steps with many thread blocks at once, so the model
// groups them into phases: a phase is a run of data steps with no signal or wait between them and no
// step reading what an earlier step of the run wrote. A phase on rank r that touches peer p's memory
// with bytes(p) costs
//   step_overhead + max( max over peers p: latency(r,p) + bytes(p) / bandwidth(r,p),
//                        sum of remote bytes / ingress bandwidth of r,
//                        local bytes / local bandwidth,
//                        max host-staged latency + host-staged bytes / min host-staged bandwidth,
//                        max over queues q: copies(q) x copy_engine_launch + bytes(q) / copy_engine_rate )
// and costs nothing if it moves no bytes. A host-staged link's figures are the whole path's (the owner's
// PCIe crossing into pinned host memory, the reader's crossing out, and the host-side flag: two crossings,
// so its latency is about twice a PCIe peer link's); the last term says that all host-staged traffic of
// one device shares its path to host memory, so staging from k peers at once costs k times the bytes
// over one link's rate, not the rate of k links. Copy-engine copies (Step::copy_engine) are not the
// multiprocessors' traffic: they leave the first four terms alone and queue, per peer and direction
// (writes into p, reads from p; a local copy on its own queue), one after another, each paying the copy
// engine's launch cost; queues run at once. The copy-engine figures are uncalibrated (DeviceModel). A signal costs
// signal_overhead on the sender and becomes visible latency(r, peer) later. Every rank starts a plan execution (one
// operation, or one segment of it) launch_overhead after it was issued: the kernel launch a GPU pays however small the
// message.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/topology.h"

namespace peerreduce {

class TimingModel {
 public:
  explicit TimingModel(const Topology& topology) : topology_(topology) {}

  double signalIssueUs() const { return topology_.device().signal_overhead_us; }
  double launchUs() const { return topology_.device().launch_overhead_us; }
  double signalLatencyUs(int from, int to) const { return topology_.link(from, to).latency_us; }
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
};

// The phase bookkeeping of one rank.
class PhaseTimer {
 public:
  PhaseTimer(const TimingModel& model, int rank);

  // Adds a copy/reduce step that the rank reaches at `clock`; returns the rank's clock after it (the end
  // of the phase it joined or opened). Adds the bytes it moves to `link_bytes` when given (index
  // from * n + to: bytes rank `from` moved in rank `to`'s memory; from == to is local).
  double addDataStep(const RankProgram& program, const Step& step, const ChunkLayout& layout, std::size_t elem_size,
                     double clock, std::vector<std::uint64_t>* link_bytes = nullptr);
  // A signal or wait ends the phase.
  void close() { open_ = false; }

 private:
  struct Written {
    BufferRef ref;
    std::int32_t chunk;
  };
  void startPhase(double clock);
  void addBytes(int peer, std::uint64_t bytes);
  void addCopyEngineCopy(const BufferRef& src, const BufferRef& dst, std::uint64_t bytes);
  double phaseCostUs() const;

  const TimingModel& model_;
  int rank_;
  bool open_ = false;
  double phase_start_us_ = 0.0;
  // Running totals of the open phase, kept incrementally so adding a step costs O(its sources).
  std::vector<std::uint64_t> bytes_;  // per peer
  std::vector<int> touched_;          // peers with bytes_ != 0, to reset cheaply
  double slowest_link_us_ = 0.0;
  std::uint64_t host_bytes_ = 0;  // bytes over host-staged links, which share the device's path to host memory
  double host_latency_us_ = 0.0;  // the longest host-staged latency of the phase
  double host_bandwidth_ = 0.0;   // bytes/us of the slowest host-staged link of the phase; 0: none yet
  std::uint64_t remote_bytes_ = 0;
  std::uint64_t total_bytes_ = 0;
  std::vector<Written> written_;         // destinations of this phase's steps
  std::vector<double> engine_queue_us_;  // per (peer, direction): 2 * peer + (1 for writes into the peer)
  std::vector<int> engine_touched_;      // queues with time, to reset cheaply
  double slowest_engine_queue_us_ = 0.0;
};

}  // namespace peerreduce
