// The one parser of PEERREDUCE_* values (util/setting_spec.h): each kind's grammar and range, messages
// that name the variable, the value as given and what is accepted, the empty-means-unset rule, and
// canonical text that reads back as the same value.
#include "util/setting_spec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

SettingSpec integerSpec() {
  SettingSpec s;
  s.name = "PEERREDUCE_TEST_MS";
  s.kind = SettingKind::kInteger;
  s.noun = "wait";
  s.unit = "ms";
  s.min_integer = 1;
  s.max_integer = 100;
  return s;
}

SettingSpec bytesSpec() {
  SettingSpec s;
  s.name = "PEERREDUCE_TEST_BYTES";
  s.kind = SettingKind::kByteSize;
  s.noun = "area";
  s.unit = "bytes";
  s.min_bytes = 4096;
  s.max_bytes = std::uint64_t{1} << 30;
  return s;
}

SettingSpec choiceSpec() {
  SettingSpec s;
  s.name = "PEERREDUCE_TEST_MODE";
  s.kind = SettingKind::kChoice;
  s.noun = "mode";
  s.choices = {{"fast", 0}, {"safe", 1}, {"FAST", 0}};
  return s;
}

void expectRefused(const SettingSpec& spec, const std::string& text, const std::string& says) {
  auto parsed = parseSettingText(spec, text);
  ASSERT_FALSE(parsed.isOk()) << spec.name << "=" << text;
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = parsed.status().message();
  EXPECT_TRUE(contains(message, spec.name)) << message;
  EXPECT_TRUE(contains(message, text.substr(0, 64))) << message;
  EXPECT_TRUE(contains(message, says)) << message;
}

TEST(SettingSpec, IntegersAreDigitsOnlyWithinTheirRange) {
  const SettingSpec s = integerSpec();
  EXPECT_EQ(std::get<std::int64_t>(*parseSettingText(s, "100")), 100);
  EXPECT_EQ(std::get<std::int64_t>(*parseSettingText(s, "007")), 7);
  expectRefused(s, "-1", "is not a whole number");
  expectRefused(s, "+1", "is not a whole number");
  expectRefused(s, " 1", "is not a whole number");
  expectRefused(s, "1e2", "is not a whole number");
  expectRefused(s, "99999999999999999999", "too large");
  expectRefused(s, "0", "wait of 0 ms is outside 1..100 ms");
  expectRefused(s, "101", "outside 1..100");
}

TEST(SettingSpec, ByteSizesTakeSuffixesAndCheckRangeMultipleAndPowerOfTwo) {
  SettingSpec s = bytesSpec();
  EXPECT_EQ(std::get<std::uint64_t>(*parseSettingText(s, "64K")), 65536u);
  expectRefused(s, "1K", "area of 1024 bytes is outside 4096..1073741824");
  expectRefused(s, "2G", "outside");
  expectRefused(s, "5T", "unknown suffix");
  expectRefused(s, "lots", "does not start with a number");
  s.multiple_of = 8192;
  s.multiple_why = "the granule";
  expectRefused(s, "12K", "is not a multiple of 8192 (the granule)");
  s.multiple_of = 0;
  s.power_of_two = true;
  expectRefused(s, "12K", "is not a power of two in 4096..1073741824");
  EXPECT_TRUE(parseSettingText(s, "16K").isOk());
  s.power_of_two = false;
  s.max_bytes = UINT64_MAX;
  expectRefused(s, "1K", "below its least value of 4096 bytes");
}

TEST(SettingSpec, BooleansAndChoicesAcceptOnlyTheirSpellings) {
  SettingSpec flag;
  flag.name = "PEERREDUCE_TEST_FLAG";
  flag.kind = SettingKind::kBoolean;
  flag.choices = {{"1", 1}, {"0", 0}};
  flag.choices_text = "1 or 0";
  EXPECT_TRUE(std::get<bool>(*parseSettingText(flag, "1")));
  EXPECT_FALSE(std::get<bool>(*parseSettingText(flag, "0")));
  expectRefused(flag, "on", "is not 1 or 0");
  expectRefused(flag, "01", "is not 1 or 0");

  const SettingSpec mode = choiceSpec();
  EXPECT_EQ(std::get<std::int64_t>(*parseSettingText(mode, "FAST")), 0);
  EXPECT_EQ(std::get<std::int64_t>(*parseSettingText(mode, "safe")), 1);
  expectRefused(mode, "Safe", "unknown mode 'Safe'; expected one of fast, safe, FAST");
  const Status bad = checkSettingValue(mode, std::int64_t{5});
  EXPECT_TRUE(contains(bad.message(), "mode value 5 is not valid; expected 0..1")) << bad.message();
  EXPECT_TRUE(contains(bad.message(), "(PEERREDUCE_TEST_MODE)")) << bad.message();
}

TEST(SettingSpec, FractionsArePlainDecimalsInZeroToOne) {
  SettingSpec s;
  s.name = "PEERREDUCE_TEST_FRACTION";
  s.kind = SettingKind::kFraction;
  s.noun = "share";
  s.range_hint = "1 = all";
  EXPECT_EQ(std::get<double>(*parseSettingText(s, ".25")), 0.25);
  EXPECT_EQ(std::get<double>(*parseSettingText(s, "1")), 1.0);
  for (const char* bad : {"nan", "-0.1", "1e-3", ".", "0.1.2", "0.0000000000000000000001"}) {
    expectRefused(s, bad, "is not a number in 0..1");
  }
  expectRefused(s, "1.5", "share 1.500000 is outside 0..1 (PEERREDUCE_TEST_FRACTION; 1 = all)");
}

TEST(SettingSpec, PathsAndMasksAcceptEmptyTextAndCheckLength) {
  SettingSpec path;
  path.name = "PEERREDUCE_TEST_PATH";
  path.kind = SettingKind::kPath;
  path.noun = "path";
  path.max_chars = 4;
  EXPECT_EQ(std::get<std::string>(*parseSettingText(path, "")), "");
  expectRefused(path, "abcde", "path of 5 characters exceeds 4");
  SettingSpec mask = path;
  mask.kind = SettingKind::kLinkMask;
  mask.noun = "link mask";
  mask.max_chars = 16;
  EXPECT_EQ(std::get<std::string>(*parseSettingText(mask, "0-1,2-3")), "0-1,2-3");
  EXPECT_EQ(std::get<std::string>(*parseSettingText(mask, "0-1,host:all")), "0-1,host:all");
  expectRefused(mask, "0-1;2", "link mask entry '0-1;2': link mask rank '1;2' is not a whole number");
  expectRefused(mask, "0-1-2", "link mask entry '0-1-2' is not A-B, host:A-B or host:all");
  expectRefused(mask, "host:2-2", "link mask entry 'host:2-2' names one rank twice");
}

TEST(SettingSpec, EmptyTextIsRefusedWhereItMeansNothing) {
  const Status empty = parseSettingText(integerSpec(), "").status();
  EXPECT_EQ(empty.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(empty.message(), "PEERREDUCE_TEST_MS is empty")) << empty.message();
}

TEST(SettingSpec, ReadSettingTreatsUnsetAndEmptyAlike) {
  const SettingSpec s = integerSpec();
  std::map<std::string, std::string> env;
  const Getenv getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_FALSE(readSetting(s, getenv)->has_value());
  env[s.name] = "";
  EXPECT_FALSE(readSetting(s, getenv)->has_value());
  env[s.name] = "42";
  EXPECT_EQ(std::get<std::int64_t>(**readSetting(s, getenv)), 42);
  env[s.name] = "x";
  EXPECT_EQ(readSetting(s, getenv).status().code(), ErrorCode::kInvalidArgument);
}

TEST(SettingSpec, ValuesOfTheWrongTypeAreAnInternalError) {
  EXPECT_EQ(checkSettingValue(integerSpec(), std::string("5")).code(), ErrorCode::kInternal);
  EXPECT_FALSE(settingValueHasKind(bytesSpec(), std::int64_t{5}));
  EXPECT_TRUE(settingValueHasKind(bytesSpec(), std::uint64_t{5}));
}

TEST(SettingSpec, CanonicalTextReadsBackAsTheSameValue) {
  SettingSpec fraction;
  fraction.name = "PEERREDUCE_TEST_FRACTION";
  fraction.kind = SettingKind::kFraction;
  for (double v : {0.0, 0.1, 0.25, 0.3, 0.5, 0.75, 1.0}) {
    const std::string text = formatSettingValue(fraction, v);
    EXPECT_EQ(std::get<double>(*parseSettingText(fraction, text)), v) << text;
  }
  EXPECT_EQ(formatSettingValue(choiceSpec(), std::int64_t{0}), "fast");
  EXPECT_EQ(formatSettingValue(bytesSpec(), std::uint64_t{65536}), "65536");
}

TEST(SettingSpec, DefaultsAndRangesInWords) {
  SettingSpec s = bytesSpec();
  s.default_value = std::uint64_t{32} << 20;
  EXPECT_EQ(describeDefault(s), "32 MiB");
  EXPECT_EQ(describeAccepted(s), "4 KiB .. 1 GiB");
  s.default_value = std::uint64_t{0};
  s.default_note = "off";
  EXPECT_EQ(describeDefault(s), "0 bytes (off)");
  s.default_value = std::uint64_t{UINT64_MAX};
  s.default_note.clear();
  EXPECT_EQ(describeDefault(s), "no limit") << "a default that caps nothing";
  s.default_value.reset();
  s.default_note = "the device's";
  EXPECT_EQ(describeDefault(s), "the device's");
  SettingSpec ms = integerSpec();
  ms.default_value = std::int64_t{30};
  EXPECT_EQ(describeDefault(ms), "30 ms");
  EXPECT_EQ(describeAccepted(ms), "1..100 ms");
}

}  // namespace
}  // namespace peerreduce
