// SimTransport: one rank's Transport onto a SimEngine.
#pragma once

#include <memory>

#include "engine.h"
#include "peerreduce/transport.h"

namespace peerreduce::sim {

class SimTransport final : public Transport {
 public:
  SimTransport(std::shared_ptr<SimEngine> engine, int rank) : engine_(std::move(engine)), rank_(rank) {}

  std::string name() const override { return "simulator"; }
  std::string architecture() const override { return "simulator"; }
  int rank() const override { return rank_; }
  int worldSize() const override { return engine_->worldSize(); }
  StatusOr<std::vector<std::byte>> openSymmetric(std::size_t bytes) override {
    return engine_->openSymmetric(rank_, bytes);
  }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    return engine_->connectPeers(rank_, records);
  }
  Topology topology() const override { return engine_->topology(); }
  Status submit(const ExecutionRequest& request, StreamHandle /*stream: one queue per rank*/) override {
    return engine_->submit(rank_, request);
  }
  Status synchronize(StreamHandle /*stream*/, std::chrono::milliseconds timeout) override {
    return engine_->synchronize(rank_, timeout);
  }
  Status asyncError() const override { return engine_->asyncError(rank_); }
  void abort() override { engine_->abort(rank_); }

 private:
  std::shared_ptr<SimEngine> engine_;
  int rank_;
};

}  // namespace peerreduce::sim
