#include "world_provider.h"

namespace peerreduce::testing {
namespace {

class SimWorldProvider final : public WorldProvider {
 public:
  int fixedWorldSize() const override { return 0; }
  bool onHardware() const override { return false; }
  StatusOr<std::shared_ptr<TestWorld>> acquire(int size, const Config& config, std::uint64_t sim_seed) override {
    sim::SimOptions options;
    options.seed = sim_seed;
    PR_ASSIGN_OR_RETURN(auto world, makeSimTestWorld(size, options, config));
    return std::shared_ptr<TestWorld>(std::move(world));
  }
};

std::unique_ptr<WorldProvider>& current() {
  static std::unique_ptr<WorldProvider> provider = std::make_unique<SimWorldProvider>();
  return provider;
}

}  // namespace

WorldProvider& worldProvider() { return *current(); }

void installWorldProvider(std::unique_ptr<WorldProvider> provider) { current() = std::move(provider); }

}  // namespace peerreduce::testing
