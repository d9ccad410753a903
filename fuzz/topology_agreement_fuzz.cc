// Fuzzes the topology rows ranks exchange at communicator creation (agreeOnTopology). A fake
// bootstrap answers the all-gather with every rank's row equal to this rank's, then the input patches
// the gathered bytes (offset, length, bytes), so a short input corrupts any field of any row, and
// picks the world size and the link mask. Oracles: an agreed topology has the world's size, only
// links whose numbers are finite and positive, a finite device model, and an architecture name that
// fits its field.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "api/topology_agreement.h"
#include "fuzz_input.h"

namespace {

using namespace peerreduce;

class PatchingBootstrap final : public Bootstrap {
 public:
  PatchingBootstrap(int rank, int size, fuzz::FuzzInput& input) : rank_(rank), size_(size), input_(input) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all, std::chrono::milliseconds) override {
    if (mine.empty() || all.size() != mine.size() * static_cast<std::size_t>(size_)) {
      fuzz::oracleFailed("agreeOnTopology gathered blocks of inconsistent sizes");
    }
    for (int r = 0; r < size_; ++r)
      std::memcpy(all.data() + static_cast<std::size_t>(r) * mine.size(), mine.data(), mine.size());
    constexpr int kMaxPatches = 16;
    for (int patch = 0; patch < kMaxPatches && !input_.empty(); ++patch) {
      std::size_t at = input_.u32() % all.size();
      const auto bytes = input_.bytes(input_.byte() % 32u);
      for (std::byte b : bytes) {
        if (at >= all.size()) break;
        all[at++] = b;
      }
    }
    return Status::ok();
  }

 private:
  int rank_;
  int size_;
  fuzz::FuzzInput& input_;
};

bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput input(data, size);
  const int n = input.intIn(1, 8);  // larger worlds only repeat rows
  const int rank = input.intIn(0, n - 1);
  Config config;
  config.link_mask = input.until('\n');
  PatchingBootstrap bootstrap(rank, n, input);
  auto agreed = agreeOnTopology(rank, n, Topology::fullMesh(n), "simulator", bootstrap, config);
  if (!agreed.isOk()) return 0;
  const Topology& t = agreed->topology;
  if (t.worldSize() != n) fuzz::oracleFailed("the agreed topology has another world size");
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const LinkInfo& link = t.link(a, b);
      if (link.connected() &&
          (!std::isfinite(link.latency_us) || link.latency_us < 0 || !finitePositive(link.bandwidth_gbps))) {
        fuzz::oracleFailed("the agreed topology has a link with invalid numbers");
      }
    }
  }
  const DeviceModel& device = t.device();
  if (!std::isfinite(device.step_overhead_us) || !std::isfinite(device.signal_overhead_us) ||
      !finitePositive(device.local_bandwidth_gbps) || !finitePositive(device.ingress_bandwidth_gbps) ||
      !std::isfinite(device.launch_overhead_us) || device.launch_overhead_us < 0 ||
      !std::isfinite(device.copy_engine_launch_us) || device.copy_engine_launch_us < 0 ||
      !finitePositive(device.copy_engine_gbps)) {
    fuzz::oracleFailed("the agreed device model has invalid numbers");
  }
  if (agreed->architecture.size() >= 32) fuzz::oracleFailed("the agreed architecture name is too long");
  return 0;
}
