// SimTransport: one rank's Transport onto a SimEngine, and onto its world's SimBufferRegistry for
// user-buffer registration.
#pragma once

#include <memory>

#include "engine.h"
#include "peerreduce/transport.h"
#include "sim_buffer_registry.h"
#include "topology/link_mask.h"

namespace peerreduce::sim {

// Batches take up to this many bytes per operation: the GPU's defaults for its low-latency one-shot and
// two-shot (4 ranks), so a batch is grouped on the simulator as it is on GPUs with default settings.
inline constexpr std::size_t kSimMaxOneShotBatchBytes = std::size_t{256} << 10;
inline constexpr std::size_t kSimMaxTwoShotBatchBytes = std::size_t{1} << 20;

// One rank's transport; it has every optional capability but HostStaging (time marks in virtual time,
// buffer sharing through the world's registry, batches, agreed links with host staging through the
// communicator's pinned pool, the fallback of failed access probes to host-staged links), so it hands out
// itself for each.
class SimTransport final : public Transport,
                           private TimeMarks,
                           private BufferSharing,
                           private BatchSubmit,
                           private LinkAdoption,
                           private ProbeFallback {
 public:
  SimTransport(std::shared_ptr<SimEngine> engine, std::shared_ptr<SimBufferRegistry> buffers, int rank)
      : engine_(std::move(engine)), buffers_(std::move(buffers)), rank_(rank) {}

  TransportIdentity identity() const override {
    return {"simulator", "simulator", rank_, engine_->worldSize(), /*compares_operations=*/true};
  }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    PR_ASSIGN_OR_RETURN(std::vector<std::byte> record, engine_->openSymmetric(rank_, bytes));
    return OpenedRegion{std::move(record), engine_->regionOf(rank_)};
  }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    return engine_->connectPeers(rank_, records);
  }
  Topology topology() const override { return engine_->topology(); }
  // Plans run from host memory as they are: nothing to stage.
  Status preparePlan(const std::shared_ptr<const Plan>& /*plan*/) override { return Status::ok(); }
  Status submit(const ExecutionRequest& request, StreamHandle /*stream: one queue per rank*/) override {
    return engine_->submit(rank_, request);
  }
  Status synchronize(StreamHandle /*stream*/, std::chrono::milliseconds timeout) override {
    return engine_->synchronize(rank_, timeout);
  }
  Status asyncError() const override { return engine_->asyncError(rank_); }
  void abort() override { engine_->abort(rank_); }
  PeerHealth peerHealth(int peer) const override { return engine_->peerHealth(rank_, peer); }
  TransportCapabilities capabilities() override {
    TransportCapabilities caps;
    caps.time_marks = this;
    caps.buffer_sharing = this;
    caps.batch_submit = this;
    caps.link_adoption = this;
    caps.probe_fallback = this;
    return caps;
  }

  // The world's registry: tests declare allocations (trackAllocation) and count live exports.
  SimBufferRegistry& buffers() { return *buffers_; }

 private:
  std::size_t maxBatchBytes(Algorithm algorithm) const override {
    if (algorithm == Algorithm::kOneShot) return kSimMaxOneShotBatchBytes;
    return algorithm == Algorithm::kTwoShot ? kSimMaxTwoShotBatchBytes : 0;
  }
  Status adoptLinks(const Topology& agreed, std::shared_ptr<PinnedHostPool> staging) override {
    return engine_->adoptLinks(rank_, agreed, std::move(staging));
  }
  // The simulator probes nothing itself (the fault injector fails probes), but falls back as a GPU does.
  std::vector<int> failedProbes() const override { return {}; }
  Status fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) override {
    return engine_->fallBackToHostStaging(rank_, pairs, hostStagedLinkFor(identity().architecture));
  }
  Status reserveTimeMarks(std::size_t count) override { return engine_->reserveTimeMarks(rank_, count); }
  StatusOr<bool> markTime(std::size_t mark, StreamHandle /*stream*/) override { return engine_->markTime(rank_, mark); }
  StatusOr<std::optional<double>> markedSpanUs(std::size_t from, std::size_t to) override {
    return engine_->markedSpanUs(rank_, from, to);
  }
  StatusOr<BufferAllocation> allocationOf(const void* ptr, std::size_t bytes) override {
    return buffers_->allocationOf(rank_, ptr, bytes);
  }
  StatusOr<std::vector<std::byte>> exportBuffer(const void* base, std::size_t bytes) override {
    return buffers_->exportBuffer(rank_, base, bytes);
  }
  void releaseBuffer(const void* base, std::size_t /*bytes*/) override { buffers_->releaseBuffer(rank_, base); }
  StatusOr<PeerBufferView> openPeerBuffer(int peer, const std::vector<std::byte>& record, std::size_t offset,
                                          std::size_t bytes) override {
    return buffers_->openPeerBuffer(rank_, peer, record, offset, bytes);
  }

  std::shared_ptr<SimEngine> engine_;
  std::shared_ptr<SimBufferRegistry> buffers_;
  int rank_;
};

}  // namespace peerreduce::sim
