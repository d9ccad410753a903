// Strict parsing of untrusted text (util/parse.h): whole-string matches, range and overflow checks,
// and errors that name what was being parsed.
#include "util/parse.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "text_contains.h"

namespace peerreduce {
namespace {

using Words = std::vector<std::string>;
constexpr std::int64_t kParseMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kParseMax = std::numeric_limits<std::int64_t>::max();

using peerreduce::testing::contains;

TEST(SplitString, KeepsEmptyFieldsSoPositionsAreMeaningful) {
  EXPECT_EQ(splitString("", ','), Words{""});
  EXPECT_EQ(splitString("a", ','), Words{"a"});
  EXPECT_EQ(splitString("a,b", ','), (Words{"a", "b"}));
  EXPECT_EQ(splitString(",a,,b,", ','), (Words{"", "a", "", "b", ""}));
  EXPECT_EQ(splitString("2x4", 'x'), (Words{"2", "4"}));
}

TEST(SplitWords, DropsRunsOfSpacesAndTabs) {
  EXPECT_EQ(splitWords(""), Words{});
  EXPECT_EQ(splitWords(" \t "), Words{});
  EXPECT_EQ(splitWords("link 0 1"), (Words{"link", "0", "1"}));
  EXPECT_EQ(splitWords("\t link  \t0   1 "), (Words{"link", "0", "1"}));
}

TEST(ParseInt64, AcceptsTheWholeRangeIncludingItsEnds) {
  EXPECT_EQ(*parseInt64("0", 0, 10, "n"), 0);
  EXPECT_EQ(*parseInt64("-0", 0, 10, "n"), 0);
  EXPECT_EQ(*parseInt64("10", 0, 10, "n"), 10);
  EXPECT_EQ(*parseInt64("-42", -100, 100, "n"), -42);
  EXPECT_EQ(*parseInt64("007", 0, 10, "n"), 7);
  EXPECT_EQ(*parseInt64("9223372036854775807", kParseMin, kParseMax, "n"), kParseMax);
  EXPECT_EQ(*parseInt64("-9223372036854775808", kParseMin, kParseMax, "n"), kParseMin);
}

TEST(ParseInt64, RejectsWithTheNameAndTheReason) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "ranks is empty"},
      {"-", "ranks '-' is not a number"},
      {"+5", "ranks '+5' is not a whole number"},
      {"5 ", "is not a whole number"},
      {"1.0", "is not a whole number"},
      {"0x10", "is not a whole number"},
      {"9223372036854775808", "ranks '9223372036854775808' is out of range"},
      {"-9223372036854775809", "is out of range"},
      {"99999999999999999999999", "is out of range"},
      {"65", "ranks 65 is outside 1..64"},
      {"0", "ranks 0 is outside 1..64"},
      {"-3", "ranks -3 is outside 1..64"},
  };
  for (const auto& c : cases) {
    auto parsed = parseInt64(c.text, 1, 64, "ranks");
    ASSERT_FALSE(parsed.isOk()) << "'" << c.text << "' parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(parsed.status().message(), c.says)) << c.text << ": " << parsed.status().message();
  }
}

// An attacker-sized input is shown truncated, so one bad value cannot make a megabyte error message.
TEST(ParseInt64, ShowsAtMost64CharactersOfTheInput) {
  const std::string huge(100000, '7');
  auto parsed = parseInt64(huge, 0, 10, "n");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_LT(parsed.status().message().size(), 200u);
}

TEST(ParseDouble, AcceptsFiniteDecimalForms) {
  EXPECT_EQ(*parseDouble("1", "x"), 1.0);
  EXPECT_EQ(*parseDouble("0.5", "x"), 0.5);
  EXPECT_EQ(*parseDouble("-2.25", "x"), -2.25);
  EXPECT_EQ(*parseDouble("+3", "x"), 3.0);
  EXPECT_EQ(*parseDouble("1e3", "x"), 1000.0);
  EXPECT_EQ(*parseDouble("2.5E-1", "x"), 0.25);
  EXPECT_EQ(*parseDouble(".5", "x"), 0.5);
}

TEST(ParseDouble, RejectsNonNumbersInfinitiesAndJunk) {
  for (const char* text : {"", "nan", "inf", "-inf", "0x1p3", "1,5", "1 ", "abc"}) {
    auto parsed = parseDouble(text, "latency_us");
    ASSERT_FALSE(parsed.isOk()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(parsed.status().message(), "latency_us '")) << parsed.status().message();
  }
  for (const char* text : {"1e999", "-1e400", "1..2", "1e", "--1", "e5", "1e5e5", "+"}) {
    auto parsed = parseDouble(text, "gbps");
    ASSERT_FALSE(parsed.isOk()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_TRUE(contains(parsed.status().message(), "is not a finite decimal number")) << parsed.status().message();
  }
  const std::string long_number(65, '1');
  EXPECT_FALSE(parseDouble(long_number, "x").isOk()) << "more than 64 characters";
  EXPECT_TRUE(parseDouble(std::string(64, '1'), "x").isOk());
}

}  // namespace
}  // namespace peerreduce
