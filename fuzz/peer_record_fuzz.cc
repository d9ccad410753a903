// Fuzzes the records ranks exchange at creation to map each other's symmetric memory: the simulator's
// (SimEngine::connectPeers) and the GPU transport's (gpu::decodePeerRecord; the GPU calls that follow
// need hardware). Genuine records of a small world are built first, then the input corrupts them:
// patches of single bytes, truncation or extension of one record, a missing or extra record.
// Oracles: the simulator accepts only records identical to the genuine ones (every field of its
// record is checked exactly); a GPU record is accepted only if its identity fields (magic, version,
// rank, world size, region size) are the genuine ones and its values are in range. The buffer records
// of registration (gpu::decodeBufferRecord) are fuzzed the same way.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine.h"
#include "fuzz_input.h"
#include "gpu/peer_record.h"

namespace {

using namespace peerreduce;
using Records = std::vector<std::vector<std::byte>>;

// Applies the rest of the input to `records`: each edit is an op byte, a record index and operands.
void corrupt(fuzz::FuzzInput& input, Records& records) {
  constexpr int kMaxEdits = 32;
  for (int edit = 0; edit < kMaxEdits && !input.empty(); ++edit) {
    const int op = input.byte() % 4;
    if (records.empty()) return;
    auto& record = records[input.byte() % records.size()];
    if (op == 0 && !record.empty()) {  // overwrite one byte
      const std::size_t at = input.byte() % record.size();
      record[at] = static_cast<std::byte>(input.byte());
    } else if (op == 1) {  // truncate
      record.resize(input.byte() % (record.size() + 1));
    } else if (op == 2) {  // extend
      record.resize(record.size() + 1 + input.byte() % 16, std::byte{0});
    } else if (input.byte() % 2 == 0) {  // one record too many or too few
      records.pop_back();
    } else {
      records.push_back(records.front());
    }
  }
}

void fuzzSimulator(fuzz::FuzzInput& input) {
  const int n = input.intIn(1, 4);
  const int receiver = input.intIn(0, n - 1);
  sim::SimEngine engine(n, sim::SimOptions{});
  Records genuine;
  for (int r = 0; r < n; ++r) {
    auto record = engine.openSymmetric(r, 4096);
    if (!record.isOk()) fuzz::oracleFailed("opening simulated memory failed: " + record.status().toString());
    genuine.push_back(*record);
  }
  Records received = genuine;
  corrupt(input, received);
  const Status status = engine.connectPeers(receiver, received);
  if (status.isOk() && received != genuine) fuzz::oracleFailed("the simulator accepted a corrupted peer record");
  if (!status.isOk() && received == genuine)
    fuzz::oracleFailed("the simulator refused genuine records: " + status.toString());
}

void fuzzGpu(fuzz::FuzzInput& input) {
  const int n = input.intIn(1, 8);
  const gpu::PeerRecordExpectation expect{input.intIn(0, n - 1), n, std::uint64_t{4} << 20};
  Records genuine;
  for (int r = 0; r < n; ++r) {
    gpu::PeerRecord record;
    record.rank = r;
    record.world_size = n;
    record.device = r;
    record.pid = 1000;
    record.region_bytes = expect.region_bytes;
    record.region_address = 0x7f0000000000ull + static_cast<std::uint64_t>(r) * expect.region_bytes;
    record.token = 0x1234 + static_cast<std::uint64_t>(r);
    record.max_blocks = 32;
    record.multiprocessors = 132;
    genuine.push_back(gpu::encodePeerRecord(record));
  }
  Records received = genuine;
  corrupt(input, received);
  for (std::size_t peer = 0; peer < received.size(); ++peer) {
    auto record = gpu::decodePeerRecord(received[peer], static_cast<int>(peer), expect);
    if (!record.isOk()) continue;
    if (record->rank != static_cast<int>(peer) || record->world_size != n ||
        record->region_bytes != expect.region_bytes || record->magic != gpu::kPeerRecordMagic ||
        record->version != gpu::kPeerRecordVersion) {
      fuzz::oracleFailed("a GPU peer record with a wrong identity was accepted");
    }
    if (record->max_blocks < 1 || record->max_blocks > gpu::kMaxPeerBlocks || record->device < 0 ||
        record->multiprocessors < 1 || record->multiprocessors > gpu::kMaxPeerBlocks || record->region_address == 0) {
      fuzz::oracleFailed("a GPU peer record with an out-of-range value was accepted");
    }
  }
}

// Buffer records (registration): accepted only with the genuine identity and sane values.
void fuzzGpuBuffer(fuzz::FuzzInput& input) {
  const int n = input.intIn(2, 8);
  const int receiver = input.intIn(0, n - 1);
  Records genuine;
  for (int r = 0; r < n; ++r) {
    gpu::BufferRecord record;
    record.rank = r;
    record.device = r;
    record.pid = 1000 + r;
    record.export_id = 1 + static_cast<std::uint64_t>(r);
    record.base = 0x7f2000000000ull + (static_cast<std::uint64_t>(r) << 24);
    record.bytes = std::uint64_t{1} << 20;
    genuine.push_back(gpu::encodeBufferRecord(record));
  }
  Records received = genuine;
  corrupt(input, received);
  for (std::size_t peer = 0; peer < received.size(); ++peer) {
    auto record = gpu::decodeBufferRecord(received[peer], static_cast<int>(peer), receiver);
    if (!record.isOk()) continue;
    if (record->rank != static_cast<int>(peer) || record->magic != gpu::kBufferRecordMagic ||
        record->version != gpu::kBufferRecordVersion) {
      fuzz::oracleFailed("a GPU buffer record with a wrong identity was accepted");
    }
    if (record->base == 0 || record->bytes == 0 || record->base + record->bytes < record->base || record->pid <= 0 ||
        record->device < 0 || record->export_id == 0) {
      fuzz::oracleFailed("a GPU buffer record with an out-of-range value was accepted");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput input(data, size);
  const int target = input.byte() % 3;
  if (target == 0) {
    fuzzSimulator(input);
  } else if (target == 1) {
    fuzzGpu(input);
  } else {
    fuzzGpuBuffer(input);
  }
  return 0;
}
