#include <cstring>

#include "sim_cluster.h"
#include "test_world.h"

namespace peerreduce::testing {
namespace {

class HostBuffer final : public TestBuffer {
 public:
  explicit HostBuffer(std::size_t bytes) : storage_(bytes) {}
  void* data() override { return storage_.data(); }
  std::size_t bytes() const override { return storage_.size(); }
  void upload(const void* host, std::size_t offset, std::size_t bytes) override {
    if (bytes) std::memcpy(storage_.data() + offset, host, bytes);
  }
  void download(void* host, std::size_t offset, std::size_t bytes) const override {
    if (bytes) std::memcpy(host, storage_.data() + offset, bytes);
  }

 private:
  std::vector<unsigned char> storage_;
};

class SimTestWorld final : public TestWorld {
 public:
  explicit SimTestWorld(std::unique_ptr<sim::SimCluster> cluster) : cluster_(std::move(cluster)) {
    for (int r = 0; r < cluster_->size(); ++r) local_.push_back(r);
  }
  int size() const override { return cluster_->size(); }
  const std::vector<int>& localRanks() const override { return local_; }
  Communicator& comm(int rank) override { return cluster_->comm(rank); }
  Status completeAll() override { return cluster_->runUntilIdle(); }
  bool allRanksAgree(bool local) override { return local; }              // every rank is local
  bool allRanksEqual(std::uint64_t /*value*/) override { return true; }  // one value per process
  std::unique_ptr<TestBuffer> allocate(std::size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }
  sim::SimWorld* simWorld() override { return &cluster_->world(); }

 private:
  std::unique_ptr<sim::SimCluster> cluster_;
  std::vector<int> local_;
};

}  // namespace

StatusOr<std::unique_ptr<TestWorld>> makeSimTestWorld(int size, const sim::SimOptions& options, const Config& config) {
  PR_ASSIGN_OR_RETURN(auto cluster, sim::SimCluster::create(size, options, config));
  return std::unique_ptr<TestWorld>(new SimTestWorld(std::move(cluster)));
}

}  // namespace peerreduce::testing
