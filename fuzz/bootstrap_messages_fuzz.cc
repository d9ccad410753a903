// Fuzzes everything a rank receives from its peers while a communicator is created
// (Communicator::create on the simulator): the creation record (version, rank, world size, settings
// fingerprint), the symmetric-memory record blocks, the topology rows, the agreed values and the
// outcome flags. Rank 0 is real; a scripted bootstrap plays the peers. For each all-gather it first
// writes what genuine peers would send (the creation record with each peer's rank, each peer's real
// symmetric-memory record, a copy of rank 0's block otherwise), so unpatched input creates a working
// communicator, then applies the input's patches to the gathered bytes of the call they name.
// Oracle: creation returns (ok or a typed error) without crashing, hanging or reading out of bounds.
//
// The harness knows two layouts to play genuine peers: the creation record's rank at byte 8, and the
// simulator's record (its region size at byte 16) inside a block of {ok, length, bytes}.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_input.h"
#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"

namespace {

using namespace peerreduce;

struct Patch {
  int call = 0;
  std::uint32_t offset = 0;
  std::vector<std::byte> bytes;
};

constexpr std::size_t kCreationRankOffset = 8;
constexpr std::size_t kBlockHeaderBytes = 8;       // {uint32 ok, uint32 length}
constexpr std::size_t kSimRecordBytesOffset = 16;  // SymmetricRecord::bytes
constexpr int kCreationCall = 0;
constexpr int kSymmetricCall = 1;

class ScriptedBootstrap final : public Bootstrap {
 public:
  ScriptedBootstrap(int size, std::shared_ptr<sim::SimWorld> world, std::vector<Patch> patches)
      : size_(size), world_(std::move(world)), patches_(std::move(patches)) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }

  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all, std::chrono::milliseconds) override {
    const std::size_t block = mine.size();
    if (all.size() != block * static_cast<std::size_t>(size_)) {
      return invalidArgumentError("scripted bootstrap: output of " + std::to_string(all.size()) + " bytes");
    }
    for (int r = 0; r < size_; ++r) std::memcpy(all.data() + block * static_cast<std::size_t>(r), mine.data(), block);
    if (call_ == kCreationCall && block > kCreationRankOffset + 4) {
      for (std::int32_t r = 1; r < size_; ++r) {
        std::memcpy(all.data() + block * static_cast<std::size_t>(r) + kCreationRankOffset, &r, sizeof(r));
      }
    }
    if (call_ == kSymmetricCall) playPeersRecords(mine, all);
    for (const Patch& patch : patches_) {
      if (patch.call != call_) continue;
      std::size_t at = patch.offset % all.size();
      for (std::byte b : patch.bytes) {
        if (at >= all.size()) break;
        all[at++] = b;
      }
    }
    ++call_;
    return Status::ok();
  }

 private:
  // Opens each peer's simulated memory with rank 0's size and puts its genuine record in its block.
  void playPeersRecords(std::span<const std::byte> mine, std::span<std::byte> all) {
    const std::size_t block = mine.size();
    std::uint32_t length = 0;
    std::uint64_t bytes = 0;
    if (block < kBlockHeaderBytes + kSimRecordBytesOffset + sizeof(bytes)) return;
    std::memcpy(&length, mine.data() + 4, sizeof(length));
    std::memcpy(&bytes, mine.data() + kBlockHeaderBytes + kSimRecordBytesOffset, sizeof(bytes));
    for (int r = 1; r < size_; ++r) {
      auto record = world_->transport(r)->openSymmetric(bytes);
      if (!record.isOk() || record->record.size() != length || kBlockHeaderBytes + length > block) return;
      std::memcpy(all.data() + block * static_cast<std::size_t>(r) + kBlockHeaderBytes, record->record.data(), length);
    }
  }

  int size_;
  std::shared_ptr<sim::SimWorld> world_;
  std::vector<Patch> patches_;
  int call_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput input(data, size);
  const int n = input.intIn(1, 4);
  std::vector<Patch> patches;
  constexpr int kMaxPatches = 16;
  while (!input.empty() && static_cast<int>(patches.size()) < kMaxPatches) {
    Patch patch;
    patch.call = input.byte() % 8;  // creation takes fewer than 8 all-gathers
    patch.offset = input.u32();
    patch.bytes = input.bytes(input.byte() % 16u);
    patches.push_back(std::move(patch));
  }
  auto world = sim::SimWorld::create(n);
  if (!world.isOk()) fuzz::oracleFailed("a simulated world of 1..4 ranks could not be made");
  Config config;
  config.verify_plans = false;  // the verifier has its own target; here only the messages matter
  config.scratch_bytes = kMinScratchBytes;
  // The smallest pool: mapping and unmapping the default 64 MiB per rank dominated each run.
  config.memory.pool_bytes = kMinPoolBytes;
  config.timeout = std::chrono::milliseconds(1000);
  auto bootstrap = std::make_shared<ScriptedBootstrap>(n, *world, std::move(patches));
  auto comm = Communicator::create(0, n, bootstrap, (*world)->transport(0), config);
  fuzz::report(comm.isOk() ? "created" : comm.status().toString());
  return 0;
}
