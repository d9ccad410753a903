#include "select/timing_model.h"

#include <algorithm>

namespace peerreduce {
namespace {
// GB/s to bytes per microsecond: 1e9 bytes/s = 1e3 bytes/us.
constexpr double kBytesPerUsPerGbps = 1e3;

bool sameMemory(const BufferRef& a, std::int32_t a_chunk, const BufferRef& b, std::int32_t b_chunk) {
  if (a.rank != b.rank) return false;
  if (a.kind == BufferKind::kScratch || b.kind == BufferKind::kScratch) return a.kind == b.kind && a.slot == b.slot;
  // Input and output may be the same memory (in place): treat them as one, per chunk.
  return a_chunk == b_chunk;
}
}  // namespace

PhaseTimer::PhaseTimer(const TimingModel& model, int rank)
    : model_(model),
      rank_(rank),
      bytes_(static_cast<std::size_t>(model.topology().worldSize()), 0),
      engine_queue_us_(2 * static_cast<std::size_t>(model.topology().worldSize()), 0.0) {}

void PhaseTimer::startPhase(double clock) {
  open_ = true;
  phase_start_us_ = clock;
  for (int peer : touched_) bytes_[static_cast<std::size_t>(peer)] = 0;
  touched_.clear();
  written_.clear();
  for (int queue : engine_touched_) engine_queue_us_[static_cast<std::size_t>(queue)] = 0.0;
  engine_touched_.clear();
  slowest_engine_queue_us_ = 0.0;
  slowest_link_us_ = 0.0;
  host_bytes_ = 0;
  host_latency_us_ = 0.0;
  host_bandwidth_ = 0.0;
  remote_bytes_ = 0;
  total_bytes_ = 0;
}

void PhaseTimer::addBytes(int peer, std::uint64_t bytes) {
  if (bytes == 0) return;
  std::uint64_t& mine = bytes_[static_cast<std::size_t>(peer)];
  if (mine == 0) touched_.push_back(peer);
  mine += bytes;
  total_bytes_ += bytes;
  if (peer == rank_) return;
  remote_bytes_ += bytes;
  // A link's time only grows with its bytes, so the running maximum stays exact.
  const LinkInfo& link = model_.topology().link(rank_, peer);
  const double bandwidth = std::max(link.bandwidth_gbps, 1e-9) * kBytesPerUsPerGbps;
  slowest_link_us_ = std::max(slowest_link_us_, link.latency_us + static_cast<double>(mine) / bandwidth);
  if (link.link_class != LinkClass::kHostStaged) return;
  // Every host-staged transfer of this device crosses its one path to host memory: they share it, at the
  // slowest host-staged rate the phase uses, after the longest host-staged latency.
  host_bytes_ += bytes;
  host_latency_us_ = std::max(host_latency_us_, link.latency_us);
  host_bandwidth_ = host_bandwidth_ == 0.0 ? bandwidth : std::min(host_bandwidth_, bandwidth);
}

void PhaseTimer::addCopyEngineCopy(const BufferRef& src, const BufferRef& dst, std::uint64_t bytes) {
  if (bytes == 0) return;
  total_bytes_ += bytes;
  const bool writes_peer = dst.rank != rank_;
  const int peer = writes_peer ? dst.rank : src.rank;
  const int queue = 2 * peer + (writes_peer ? 1 : 0);
  double& queued = engine_queue_us_[static_cast<std::size_t>(queue)];
  if (queued == 0.0) engine_touched_.push_back(queue);
  const DeviceModel& device = model_.topology().device();
  queued += device.copy_engine_launch_us +
            static_cast<double>(bytes) / (std::max(device.copy_engine_gbps, 1e-9) * kBytesPerUsPerGbps);
  slowest_engine_queue_us_ = std::max(slowest_engine_queue_us_, queued);
}

double PhaseTimer::phaseCostUs() const {
  if (total_bytes_ == 0) return 0.0;
  const DeviceModel& device = model_.topology().device();
  const double local =
      static_cast<double>(bytes_[static_cast<std::size_t>(rank_)]) / (device.local_bandwidth_gbps * kBytesPerUsPerGbps);
  const double ingress = static_cast<double>(remote_bytes_) / (device.ingress_bandwidth_gbps * kBytesPerUsPerGbps);
  const double host = host_bytes_ == 0 ? 0.0 : host_latency_us_ + static_cast<double>(host_bytes_) / host_bandwidth_;
  return device.step_overhead_us + std::max({slowest_link_us_, ingress, local, host, slowest_engine_queue_us_});
}

double PhaseTimer::addDataStep(const RankProgram& program, const Step& step, const ChunkLayout& layout,
                               std::size_t elem_size, double clock, std::vector<std::uint64_t>* link_bytes) {
  bool depends = false;
  for (std::uint32_t i = 0; open_ && i < step.src_count && !depends; ++i) {
    const BufferRef& src = program.sources[step.src_begin + i];
    for (const Written& w : written_) depends = depends || sameMemory(src, step.chunk, w.ref, w.chunk);
  }
  if (!open_ || depends) startPhase(clock);
  written_.push_back({step.dst, step.chunk});
  const std::uint64_t bytes = static_cast<std::uint64_t>(layout.size(layout.chunkOf(step.chunk))) * elem_size;
  const auto n = static_cast<std::size_t>(model_.topology().worldSize());
  auto touch = [&](const BufferRef& ref) {
    if (!step.copy_engine) addBytes(ref.rank, bytes);
    if (link_bytes != nullptr && bytes > 0) {
      (*link_bytes)[static_cast<std::size_t>(rank_) * n + static_cast<std::size_t>(ref.rank)] += bytes;
    }
  };
  for (std::uint32_t i = 0; i < step.src_count; ++i) touch(program.sources[step.src_begin + i]);
  touch(step.dst);
  if (step.copy_engine && step.src_count == 1) addCopyEngineCopy(program.sources[step.src_begin], step.dst, bytes);
  return phase_start_us_ + phaseCostUs();
}

}  // namespace peerreduce
