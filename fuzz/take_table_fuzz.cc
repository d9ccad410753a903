// Fuzzes the NCCL library's take table parser (PEERREDUCE_NCCL_TAKE_TABLE's contents). Oracles: an
// accepted table formats to text that parses back to the same rows; every row's two ends look up to its
// own choice (rows of one collective, arch, world size and dtype class do not overlap, so no other row can
// answer there); a table narrowed to a row's machine answers the same there.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_input.h"
#include "nccl/take_table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peerreduce;
  using namespace peerreduce::nccl;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = TakeTable::parse(text);
  if (!table.isOk()) return 0;
  auto again = TakeTable::parse(table->format());
  if (!again.isOk()) fuzz::oracleFailed("a formatted take table does not parse back: " + again.status().toString());
  const auto& a = table->entries();
  const auto& b = again->entries();
  if (a.size() != b.size()) fuzz::oracleFailed("the formatted take table has a different number of rows");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const TakeEntry& e = a[i];
    if (e.collective != b[i].collective || e.arch != b[i].arch || e.world_size != b[i].world_size ||
        e.dtypes != b[i].dtypes || e.min_bytes != b[i].min_bytes || e.max_bytes != b[i].max_bytes ||
        e.choice != b[i].choice) {
      fuzz::oracleFailed("row " + std::to_string(i) + " changed in a format/parse round trip");
    }
    const TableAnswer own = e.choice == TakeChoice::kPeerreduce ? TableAnswer::kPeerreduce : TableAnswer::kNccl;
    for (const std::uint64_t bytes : {e.min_bytes, e.max_bytes}) {
      if (table->lookup(e.collective, e.arch, e.world_size, e.dtypes, bytes) != own) {
        fuzz::oracleFailed("row " + std::to_string(i) + " does not look up to its own choice at " +
                           std::to_string(bytes) + " bytes");
      }
      if (table->narrowedTo(e.arch, e.world_size).lookup(e.collective, e.arch, e.world_size, e.dtypes, bytes) != own) {
        fuzz::oracleFailed("row " + std::to_string(i) + " answers differently once the table is narrowed");
      }
    }
  }
  return 0;
}
