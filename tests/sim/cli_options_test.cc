// peerreduce-sim's option parser: every option, every malformed input (a typed error naming the
// option), and the reproduce line round-tripping through the parser.
#include "cli/cli_options.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <limits>
#include <sstream>

#include "sim_test_util.h"

namespace peerreduce::sim {
namespace {

using testing::contains;

StatusOr<CliOptions> parse(std::initializer_list<const char*> args) {
  return parseCliOptions(std::vector<std::string>(args.begin(), args.end()));
}

void expectRejected(std::initializer_list<const char*> args, std::initializer_list<const char*> parts) {
  auto parsed = parse(args);
  std::string line;
  for (const char* a : args) line += std::string(a) + " ";
  ASSERT_FALSE(parsed.isOk()) << line << "was accepted";
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << line << parsed.status().toString();
  for (const char* part : parts) {
    EXPECT_TRUE(contains(parsed.status().message(), part))
        << line << ": '" << part << "' missing in " << parsed.status().toString();
  }
}

TEST(CliOptions, NoArgumentsIsTheDefaultRun) {
  auto parsed = parse({});
  ASSERT_TRUE(parsed.isOk());
  EXPECT_TRUE(parsed->defaulted);
  EXPECT_EQ(parsed->command, CliCommand::kAllreduce);
  EXPECT_EQ(parsed->ranks, 8);
  EXPECT_EQ(parsed->count, 1048576u);
  EXPECT_EQ(parsed->dtype, DataType::kBFloat16);
  EXPECT_EQ(parsed->op, ReduceOp::kSum);
  EXPECT_EQ(parsed->algorithm, Algorithm::kAuto);
  EXPECT_EQ(parsed->seed, 1u);
  EXPECT_EQ(parsed->iterations, 1);
  EXPECT_FALSE(parsed->in_place);
  EXPECT_FALSE(parsed->json);
  EXPECT_TRUE(parsed->race_checking);
  EXPECT_TRUE(parsed->trace_path.empty());
}

TEST(CliOptions, EveryOptionIsParsed) {
  auto parsed = parse({"allreduce",
                       "--ranks",
                       "5",
                       "--count",
                       "12345",
                       "--dtype",
                       "int64",
                       "--op",
                       "min",
                       "--algo",
                       "rabenseifner",
                       "--seed",
                       "18446744073709551615",
                       "--iterations",
                       "1000",
                       "--in-place",
                       "--no-race-check",
                       "--trace",
                       "out.json",
                       "--json"});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_FALSE(parsed->defaulted);
  EXPECT_EQ(parsed->command, CliCommand::kAllreduce);
  EXPECT_EQ(parsed->ranks, 5);
  EXPECT_EQ(parsed->count, 12345u);
  EXPECT_EQ(parsed->dtype, DataType::kInt64);
  EXPECT_EQ(parsed->op, ReduceOp::kMin);
  EXPECT_EQ(parsed->algorithm, Algorithm::kRabenseifner);
  EXPECT_EQ(parsed->seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parsed->iterations, 1000);
  EXPECT_TRUE(parsed->in_place);
  EXPECT_FALSE(parsed->race_checking);
  EXPECT_EQ(parsed->trace_path, "out.json");
  EXPECT_TRUE(parsed->json);
}

TEST(CliOptions, OptionsWorkWithoutTheCommandAndAtTheirLimits) {
  auto parsed = parse({"--ranks", "64", "--count", "0", "--iterations", "1"});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->ranks, 64);
  EXPECT_EQ(parsed->count, 0u);
  auto largest = parse({"--count", "4294967296", "--ranks", "1"});
  ASSERT_TRUE(largest.isOk()) << largest.status().toString();
  EXPECT_EQ(largest->count, kMaxCliCount);
  EXPECT_EQ(largest->ranks, 1);
  // The last occurrence of an option wins, as with most command-line tools.
  auto twice = parse({"--ranks", "2", "--ranks", "3"});
  ASSERT_TRUE(twice.isOk());
  EXPECT_EQ(twice->ranks, 3);
}

TEST(CliOptions, HelpInEveryForm) {
  for (auto args : {std::vector<std::string>{"help"}, std::vector<std::string>{"--help"},
                    std::vector<std::string>{"-h"}, std::vector<std::string>{"allreduce", "--ranks", "2", "--help"},
                    std::vector<std::string>{"--count", "3", "-h"}}) {
    auto parsed = parseCliOptions(args);
    ASSERT_TRUE(parsed.isOk()) << args.front();
    EXPECT_EQ(parsed->command, CliCommand::kHelp) << args.front();
  }
  const std::string usage = cliUsage();
  for (const char* option : {"--ranks", "--count", "--dtype", "--op", "--algo", "--seed", "--iterations", "--in-place",
                             "--no-race-check", "--trace", "--json", "--help", "Exit status"}) {
    EXPECT_TRUE(contains(usage, option)) << option;
  }
}

TEST(CliOptions, UnknownCommandOrOptionIsRejectedNamingIt) {
  expectRejected({"reduce"}, {"unknown command 'reduce'", "allreduce"});
  expectRejected({"allreduce", "--frobnicate"}, {"unknown option '--frobnicate'", "--help"});
  expectRejected({"--ranks", "2", "extra"}, {"unknown option 'extra'"});
  expectRejected({"allreduce", "allreduce"}, {"unknown option 'allreduce'"});
}

TEST(CliOptions, OptionWithoutItsValueIsRejectedNamingIt) {
  for (const char* flag : {"--ranks", "--count", "--dtype", "--op", "--algo", "--seed", "--iterations", "--trace"}) {
    expectRejected({flag}, {flag, "needs a value"});
    expectRejected({"allreduce", "--json", flag}, {flag, "needs a value"});
  }
}

TEST(CliOptions, NonNumbersAreRejectedNamingTheOption) {
  expectRejected({"--ranks", "four"}, {"--ranks four", "not a whole number"});
  expectRejected({"--count", "-1"}, {"--count -1", "not a whole number"});
  expectRejected({"--count", "1e6"}, {"--count 1e6", "not a whole number"});
  expectRejected({"--count", "12 "}, {"--count", "not a whole number"});
  expectRejected({"--seed", "0x10"}, {"--seed 0x10", "not a whole number"});
  expectRejected({"--iterations", "+3"}, {"--iterations +3", "not a whole number"});
  expectRejected({"--ranks", ""}, {"--ranks needs a number"});
  // One past the largest 64-bit value overflows; it must not wrap around to a small seed.
  expectRejected({"--seed", "18446744073709551616"}, {"--seed 18446744073709551616", "too large"});
  expectRejected({"--count", "99999999999999999999999"}, {"--count", "too large"});
}

TEST(CliOptions, OutOfRangeNumbersAreRejectedWithTheRange) {
  expectRejected({"--ranks", "0"}, {"--ranks 0", "1..64"});
  expectRejected({"--ranks", "65"}, {"--ranks 65", "1..64"});
  expectRejected({"--count", "4294967297"}, {"--count 4294967297", "0..4294967296"});
  expectRejected({"--iterations", "0"}, {"--iterations 0", "1..1000"});
  expectRejected({"--iterations", "1001"}, {"--iterations 1001", "1..1000"});
}

TEST(CliOptions, UnknownNamesAreRejectedListingTheAcceptedOnes) {
  expectRejected({"--dtype", "float128"}, {"dtype", "'float128'", "bf16"});
  expectRejected({"--op", "xor"}, {"op", "'xor'", "avg"});
  expectRejected({"--algo", "magic"}, {"algorithm", "'magic'", "recursive-doubling"});
  expectRejected({"--algo", "user"}, {"--algo user: a plan file runs with 'peerreduce-sim plan run FILE'"});
}

// --device names a calibrated profile; it prices the full mesh, so another topology beside it is refused.
TEST(CliOptions, DeviceNamesACalibratedProfile) {
  auto parsed = parse({"predict", "--ranks", "4", "--device", "h200"});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->device, "h200");
  auto with_mesh = parse({"--device", "h200", "--topology", "full-mesh"});
  ASSERT_TRUE(with_mesh.isOk()) << with_mesh.status().toString();
  expectRejected({"--device", "a100"}, {"--device 'a100' has no calibrated profile", "h200"});
  expectRejected({"--device"}, {"--device needs a value"});
  expectRejected({"predict", "--device", "h200", "--topology", "ring"},
                 {"--device h200 prices the full mesh", "--topology ring"});
  expectRejected({"--topology", "pcie:2", "--device", "h200"}, {"cannot be combined with --topology pcie:2"});
}

TEST(CliOptions, EmptyTracePathIsRejected) { expectRejected({"--trace", ""}, {"--trace needs a file name"}); }

TEST(CliOptions, CommandLineOfTheDefaultsIsMinimal) {
  const std::string line = cliCommandLine(CliOptions{});
  EXPECT_EQ(line, "peerreduce-sim allreduce --ranks 8 --count 1048576 --dtype bf16 --op sum --algo auto --seed 1");
}

std::vector<std::string> splitWords(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The "reproduce:" line peerreduce-sim prints must give back exactly the run it describes.
RC_GTEST_PROP(CliOptions, CommandLineRoundTripsThroughTheParser, ()) {
  CliOptions o;
  o.ranks = *rc::gen::inRange(1, 65);
  o.count = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(0, 5000), rc::gen::just(kMaxCliCount),
                            rc::gen::inRange<std::size_t>(0, kMaxCliCount + 1));
  o.dtype = static_cast<DataType>(*rc::gen::inRange(0, kDataTypeCount));
  o.op = static_cast<ReduceOp>(*rc::gen::inRange(0, kReduceOpCount));
  o.algorithm = static_cast<Algorithm>(*rc::gen::inRange(0, kBuiltAlgorithmCount));
  o.seed = *rc::gen::arbitrary<std::uint64_t>();
  o.iterations = *rc::gen::inRange(1, kMaxCliIterations + 1);
  o.in_place = *rc::gen::arbitrary<bool>();
  o.race_checking = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) o.device = "h200";
  o.collective = static_cast<Collective>(*rc::gen::inRange(0, kCollectiveCount));
  if (o.collective != Collective::kAllReduce) {
    o.algorithm = *rc::gen::element(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kRing);
  }
  if (o.collective == Collective::kBroadcast) o.root = *rc::gen::inRange(0, o.ranks);

  const std::vector<std::string> words = splitWords(cliCommandLine(o));
  RC_ASSERT(words.size() >= 2u);
  RC_ASSERT(words[0] == "peerreduce-sim");
  auto parsed = parseCliOptions(std::vector<std::string>(words.begin() + 1, words.end()));
  RC_ASSERT(parsed.isOk());
  RC_ASSERT(parsed->command == CliCommand::kAllreduce);
  RC_ASSERT(!parsed->defaulted);
  RC_ASSERT(parsed->ranks == o.ranks);
  RC_ASSERT(parsed->count == o.count);
  RC_ASSERT(parsed->dtype == o.dtype);
  const bool reduces = o.collective == Collective::kAllReduce || o.collective == Collective::kReduceScatter;
  RC_ASSERT(parsed->op == (reduces ? o.op : ReduceOp::kSum));  // the data movers' line names no op
  RC_ASSERT(parsed->collective == o.collective);
  RC_ASSERT(parsed->root == o.root);
  RC_ASSERT(parsed->algorithm == o.algorithm);
  RC_ASSERT(parsed->seed == o.seed);
  RC_ASSERT(parsed->iterations == o.iterations);
  RC_ASSERT(parsed->in_place == o.in_place);
  RC_ASSERT(parsed->race_checking == o.race_checking);
  RC_ASSERT(parsed->device == o.device);
}

TEST(CliOptions, EachCollectiveIsACommandWithItsOptions) {
  auto rs = parse({"reduce-scatter", "--ranks", "4", "--op", "max"});
  ASSERT_TRUE(rs.isOk()) << rs.status().toString();
  EXPECT_EQ(rs->command, CliCommand::kAllreduce);  // the run command, whichever collective it runs
  EXPECT_EQ(rs->collective, Collective::kReduceScatter);
  EXPECT_EQ(rs->op, ReduceOp::kMax);
  auto ag = parse({"all-gather", "--in-place"});
  ASSERT_TRUE(ag.isOk());
  EXPECT_EQ(ag->collective, Collective::kAllGather);
  auto bc = parse({"broadcast", "--ranks", "5", "--root", "4"});
  ASSERT_TRUE(bc.isOk());
  EXPECT_EQ(bc->collective, Collective::kBroadcast);
  EXPECT_EQ(bc->root, 4);
  auto predict = parse({"predict", "--collective", "broadcast", "--root", "1", "--ranks", "2"});
  ASSERT_TRUE(predict.isOk()) << predict.status().toString();
  EXPECT_EQ(predict->command, CliCommand::kPredict);
  EXPECT_EQ(predict->collective, Collective::kBroadcast);
  EXPECT_EQ(predict->root, 1);
  EXPECT_EQ(parse({"allreduce"})->collective, Collective::kAllReduce);
}

TEST(CliOptions, CollectiveOptionsOutsideTheirCommandAreRejectedNamingWhy) {
  expectRejected({"broadcast", "--ranks", "4", "--root", "4"}, {"--root 4 is not a rank of 4 (0..3)"});
  expectRejected({"--ranks", "4", "--root", "1"}, {"--root is broadcast's", "allreduce has no root"});
  expectRejected({"reduce-scatter", "--root", "1"}, {"reduce-scatter has no root"});
  expectRejected({"all-gather", "--op", "sum"}, {"all-gather reduces nothing"});
  expectRejected({"broadcast", "--op", "max"}, {"broadcast reduces nothing"});
  expectRejected({"reduce-scatter", "--collective", "all-gather"}, {"--collective is predict's"});
  expectRejected({"predict", "--collective", "gather"}, {"unknown collective 'gather'", "all-gather"});
  expectRejected({"broadcast", "--root", "64"}, {"--root 64: must be in 0..63"});
  expectRejected({"broadcast", "--algo", "recursive-doubling"},
                 {"--algo recursive-doubling: broadcast runs one-shot (direct), two-shot, ring, tree and "
                  "copy-engine-two-shot (or auto)"});
  expectRejected({"all-gather", "--algo", "two-shot"}, {"--algo two-shot: all-gather runs", "recursive-doubling"});
}

}  // namespace
}  // namespace peerreduce::sim
