// Fuzzes the tuning table parser (PEERREDUCE_TUNING_FILE's contents). Oracles: an accepted table
// formats to text that parses back to the same entries (collectives included), and every entry's own
// range looks up to its algorithm (ranges of one collective, arch and world size do not overlap, so no
// other entry can answer).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_input.h"
#include "select/tuning_table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peerreduce;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = TuningTable::parse(text);
  if (!table.isOk()) return 0;
  auto again = TuningTable::parse(table->format());
  if (!again.isOk()) fuzz::oracleFailed("a formatted table does not parse back: " + again.status().toString());
  const auto& a = table->entries();
  const auto& b = again->entries();
  if (a.size() != b.size()) fuzz::oracleFailed("the formatted table has a different number of entries");
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].collective != b[i].collective || a[i].arch != b[i].arch || a[i].world_size != b[i].world_size ||
        a[i].min_bytes != b[i].min_bytes || a[i].max_bytes != b[i].max_bytes || a[i].algorithm != b[i].algorithm) {
      fuzz::oracleFailed("entry " + std::to_string(i) + " changed in a format/parse round trip");
    }
    const auto found = table->lookup(a[i].collective, a[i].arch, a[i].world_size, a[i].min_bytes);
    if (!found || *found != a[i].algorithm) fuzz::oracleFailed("an entry does not look up to its own algorithm");
    const auto last = table->lookup(a[i].collective, a[i].arch, a[i].world_size, a[i].max_bytes - 1);
    if (!last || *last != a[i].algorithm) fuzz::oracleFailed("an entry's last byte looks up to another algorithm");
  }
  return 0;
}
