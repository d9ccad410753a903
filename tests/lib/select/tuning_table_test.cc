// Tuning tables (select/tuning_table.h): measured choices looked up by (arch, world size, bytes) with
// half-open ranges, every malformed line rejected with its number (the file is untrusted input), and
// format -> parse giving back the same table.
#include "select/tuning_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "text_contains.h"
#include "util/hash.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

constexpr const char* kTable =
    "# measured on the test rig\n"
    "peerreduce-tuning 1\n"
    "entry sm_90 4 65536 16777216 two-shot   # listed out of order on purpose\n"
    "entry sm_90 4 0 65536 one-shot\n"
    "entry gfx90a 8 0 1024 recursive-doubling\n"
    "\n"
    "entry sm_90 8 1048576 9223372036854775807 ring\n";

TEST(TuningTable, LooksUpHalfOpenRangesByArchAndWorldSize) {
  auto table = TuningTable::parse(kTable);
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  EXPECT_EQ(table->entries().size(), 4u);
  EXPECT_EQ(table->lookup("sm_90", 4, 0), Algorithm::kOneShot);
  EXPECT_EQ(table->lookup("sm_90", 4, 65535), Algorithm::kOneShot);
  EXPECT_EQ(table->lookup("sm_90", 4, 65536), Algorithm::kTwoShot) << "min is inclusive";
  EXPECT_EQ(table->lookup("sm_90", 4, 16777215), Algorithm::kTwoShot);
  EXPECT_EQ(table->lookup("sm_90", 4, 16777216), std::nullopt) << "max is exclusive";
  EXPECT_EQ(table->lookup("sm_90", 8, std::uint64_t{1} << 40), Algorithm::kRing);
  EXPECT_EQ(table->lookup("sm_90", 8, 1000), std::nullopt) << "not covered: the cost model decides";
  EXPECT_EQ(table->lookup("sm_80", 4, 100), std::nullopt) << "another arch";
  EXPECT_EQ(table->lookup("sm_90", 2, 100), std::nullopt) << "another world size";
  EXPECT_EQ(table->lookup("gfx90a", 8, 1023), Algorithm::kRecursiveDoubling);
}

TEST(TuningTable, FormatIsSortedAndParsesBackToTheSameTable) {
  auto table = TuningTable::parse(kTable);
  ASSERT_TRUE(table.isOk());
  const std::string text = table->format();
  EXPECT_EQ(text,
            "peerreduce-tuning 1\n"
            "entry gfx90a 8 0 1024 recursive-doubling\n"
            "entry sm_90 4 0 65536 one-shot\n"
            "entry sm_90 4 65536 16777216 two-shot\n"
            "entry sm_90 8 1048576 9223372036854775807 ring\n");
  auto again = TuningTable::parse(text);
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->format(), text);
  EXPECT_TRUE(TuningTable::parse("peerreduce-tuning 1\n")->entries().empty());
}

TEST(TuningTable, MalformedLinesAreRejectedWithTheirLineNumber) {
  const std::string h = "peerreduce-tuning 1\n";
  const struct {
    std::string text;
    const char* says;
  } cases[] = {
      {"", "tuning table is empty; it must start with 'peerreduce-tuning 1'"},
      {"peerreduce-tuning 2\n", "tuning table line 1: the first line must be 'peerreduce-tuning 1'"},
      {"entry sm_90 4 0 1 ring\n", "line 1: the first line must be"},
      {h + "entry sm_90 4 0 1\n", "line 2: expected 'entry ARCH WORLD_SIZE MIN_BYTES MAX_BYTES ALGORITHM'"},
      {h + "row sm_90 4 0 1 ring\n", "line 2: expected 'entry"},
      {h + "entry sm/90 4 0 1 ring\n", "line 2: arch must be 1-32 letters, digits, '_', '-' or '.'"},
      {h + "entry " + std::string(33, 'a') + " 4 0 1 ring\n", "arch must be 1-32"},
      {h + "entry sm_90 0 0 1 ring\n", "line 2: world size 0 is outside 1..64"},
      {h + "entry sm_90 4 -1 1 ring\n", "line 2: min bytes -1 is outside"},
      {h + "entry sm_90 4 0 0 ring\n", "line 2: max bytes 0 is outside"},
      {h + "entry sm_90 4 10 10 ring\n", "line 2: max bytes must be above min bytes"},
      {h + "entry sm_90 4 0 x ring\n", "line 2: max bytes 'x' is not a whole number"},
      {h + "entry sm_90 4 0 1 tree-ish\n", "line 2: unknown algorithm 'tree-ish'"},
      {h + "entry sm_90 4 0 1 auto\n", "line 2: an entry must name a concrete algorithm, not auto"},
      {h + "entry a 2 0 100 ring\nentry a 2 50 200 one-shot\n",
       "tuning table: entries for a with 2 ranks overlap at [50, 100)"},
      {h + "entry a 2 0 100 ring\nentry a 2 10 20 one-shot\n", "overlap at [10, 20)"},
  };
  for (const auto& c : cases) {
    auto table = TuningTable::parse(c.text);
    ASSERT_FALSE(table.isOk()) << c.text;
    EXPECT_EQ(table.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(table.status().message(), c.says)) << c.text << "\n-> " << table.status().message();
  }
  // Touching ranges, and the same range for another arch or world size, are fine.
  EXPECT_TRUE(TuningTable::parse(h + "entry a 2 0 100 ring\nentry a 2 100 200 one-shot\nentry b 2 0 100 ring\n"
                                     "entry a 3 0 100 ring\n")
                  .isOk());
}

TEST(TuningTable, SizeAndEntryLimitsAreEnforced) {
  std::string many = "peerreduce-tuning 1\n";
  for (std::size_t i = 0; i <= kMaxTuningEntries; ++i) {
    many += "entry a 4 " + std::to_string(i * 10) + " " + std::to_string(i * 10 + 10) + " ring\n";
  }
  auto too_many = TuningTable::parse(many);
  ASSERT_FALSE(too_many.isOk());
  EXPECT_TRUE(contains(too_many.status().message(), "line 4098: more than 4096 entries"))
      << too_many.status().message();

  auto too_big = TuningTable::parse(std::string(kMaxTuningBytes + 1, '#'));
  ASSERT_FALSE(too_big.isOk());
  EXPECT_TRUE(contains(too_big.status().message(), "exceeds the limit of 1048576")) << too_big.status().message();
}

TEST(TuningTable, LoadsFromAFileAndNamesThePathOnErrors) {
  const std::string path = ::testing::TempDir() + "peerreduce_tuning_test.txt";
  {
    std::ofstream out(path);
    out << kTable;
  }
  auto loaded = TuningTable::load(path);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded->lookup("sm_90", 4, 1), Algorithm::kOneShot);
  {
    std::ofstream out(path);
    out << "peerreduce-tuning 1\nentry x 4 0 1 auto\n";
  }
  auto bad = TuningTable::load(path);
  ASSERT_FALSE(bad.isOk());
  EXPECT_TRUE(contains(bad.status().message(), "tuning table '" + path + "': tuning table line 2"))
      << bad.status().message();
  std::remove(path.c_str());
  auto missing = TuningTable::load(path);
  ASSERT_FALSE(missing.isOk());
  EXPECT_TRUE(contains(missing.status().message(), "cannot open tuning table '" + path + "' (PEERREDUCE_TUNING_FILE)"));
}

// The fingerprint every rank compares is the hash of the table's formatted text: equal for tables that format
// alike (entries in any order), different when an entry differs.
TEST(TuningTable, FingerprintIsTheHashOfTheFormattedTable) {
  auto table = TuningTable::parse(kTable);
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  Fnv1a hash;
  hash.addString(table->format());
  EXPECT_EQ(table->fingerprint(), hash.value());
  auto reparsed = TuningTable::parse(table->format());
  ASSERT_TRUE(reparsed.isOk()) << reparsed.status().toString();
  EXPECT_EQ(reparsed->fingerprint(), table->fingerprint());
  auto other = TuningTable::parse("peerreduce-tuning 1\nentry sm_90 4 0 65536 two-shot\n");
  ASSERT_TRUE(other.isOk()) << other.status().toString();
  EXPECT_NE(other->fingerprint(), table->fingerprint());
  EXPECT_EQ(TuningTable().fingerprint(), 0u);
}

}  // namespace
}  // namespace peerreduce
