// peerreduce-bench's command line (bench/bench_options.h): --coll and --root, --algo checked against
// the collective's algorithms, and every bad flag a typed error naming it.
#include "bench_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peerreduce::bench {
namespace {

StatusOr<Options> parse(std::vector<const char*> args, int ranks = 4) {
  args.insert(args.begin(), "peerreduce-bench");
  return parseOptions(static_cast<int>(args.size()), args.data(), ranks);
}

TEST(BenchOptions, DefaultsAreTheAllreduceRunOfEarlierVersions) {
  auto o = parse({});
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o->collective, Collective::kAllReduce);
  EXPECT_EQ(o->algorithms, std::vector<Algorithm>{Algorithm::kAuto});
  EXPECT_FALSE(o->algorithm_given);
  EXPECT_TRUE(o->in_place);
  EXPECT_FALSE(o->ce_probe);
  auto ce = parse({"--ce"});
  ASSERT_TRUE(ce.isOk()) << ce.status().toString();
  EXPECT_TRUE(ce->ce_probe) << "--ce is a switch: the copy-engine probe";
  EXPECT_FALSE(parse({"--ce", "1"}).isOk()) << "a switch takes no value";
  EXPECT_EQ(o->skew_us, 0) << "ranks start each replay together unless asked";
  auto skewed = parse({"--skew-us", "200"});
  ASSERT_TRUE(skewed.isOk()) << skewed.status().toString();
  EXPECT_EQ(skewed->skew_us, 200);
  EXPECT_FALSE(o->eager) << "graph replays unless asked";
  auto eager = parse({"--eager"});
  ASSERT_TRUE(eager.isOk()) << eager.status().toString();
  EXPECT_TRUE(eager->eager);
  EXPECT_FALSE(parse({"--eager", "1"}).isOk()) << "--eager is a switch";
}

TEST(BenchOptions, CollRootAndAlgoAll) {
  auto o = parse({"--coll", "broadcast", "--root", "3", "--algo", "all", "--min-bytes", "64K", "--max-bytes", "1M"});
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o->collective, Collective::kBroadcast);
  EXPECT_EQ(o->root, 3);
  EXPECT_EQ(o->min_bytes, std::size_t{64} << 10);
  EXPECT_EQ(o->max_bytes, std::size_t{1} << 20);
  // Every algorithm broadcast has, the copy engines' included (forced only in the library's own choice).
  EXPECT_EQ(o->algorithms, (std::vector<Algorithm>{Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                                   Algorithm::kTree, Algorithm::kCopyEngineTwoShot}));
  auto rs = parse({"--coll", "reduce-scatter", "--algo", "all"});
  ASSERT_TRUE(rs.isOk());
  EXPECT_EQ(rs->algorithms,
            (std::vector<Algorithm>{Algorithm::kOneShot, Algorithm::kRing, Algorithm::kRecursiveDoubling,
                                    Algorithm::kTree, Algorithm::kCopyEngineTwoShot}));
  auto ar = parse({"--algo", "all"});
  ASSERT_TRUE(ar.isOk());
  EXPECT_EQ(ar->algorithms.size(), static_cast<std::size_t>(kBuiltAlgorithmCount - 1)) << "allreduce has every one";
  auto ag = parse({"--coll", "all-gather", "--algo", "ring", "--dtype", "bf16", "--no-in-place"});
  ASSERT_TRUE(ag.isOk());
  EXPECT_EQ(ag->algorithms, std::vector<Algorithm>{Algorithm::kRing});
  EXPECT_TRUE(ag->algorithm_given);
  EXPECT_EQ(ag->dtype, DataType::kBFloat16);
  EXPECT_FALSE(ag->in_place);
}

// --machines splits the world into machines of equal rank counts, timed eagerly (the step between machines
// runs on the host), every collective.
TEST(BenchOptions, MachinesSplitTheWorldAndTimeEagerCalls) {
  auto o = parse({});
  ASSERT_TRUE(o.isOk());
  EXPECT_EQ(o->machines, 0) << "one machine unless asked";
  for (const char* coll : {"allreduce", "reduce-scatter", "all-gather", "broadcast"}) {
    auto two = parse({"--machines", "2", "--eager", "--coll", coll});
    ASSERT_TRUE(two.isOk()) << coll << ": " << two.status().toString();
    EXPECT_EQ(two->machines, 2);
    EXPECT_TRUE(two->eager);
  }
  auto each = parse({"--machines", "4", "--eager"});
  ASSERT_TRUE(each.isOk()) << each.status().toString();
  EXPECT_EQ(each->machines, 4) << "a machine per rank";
  auto pair = parse({"--machines", "2", "--eager"}, 2);
  ASSERT_TRUE(pair.isOk()) << "two ranks: a machine each";
}

TEST(BenchOptions, BadFlagsAreTypedErrorsNamingThem) {
  const struct {
    std::vector<const char*> args;
    const char* says;
  } cases[] = {
      {{"--coll", "allgather"}, "unknown collective 'allgather'"},
      {{"--coll"}, "--coll needs a value"},
      {{"--coll", "broadcast", "--root", "4"}, "--root '4': takes a whole number in 0..3"},
      {{"--coll", "broadcast", "--root", "x"}, "--root 'x'"},
      {{"--root", "1"}, "--root applies to --coll broadcast only, not allreduce"},
      {{"--coll", "reduce-scatter", "--batch", "4"}, "--batch measures allreduceBatch: it needs --coll allreduce"},
      {{"--coll", "broadcast", "--algo", "recursive-doubling"},
       "--algo 'recursive-doubling': broadcast has no such algorithm"},
      {{"--coll", "all-gather", "--algo", "two-shot"}, "--algo 'two-shot': all-gather has no such algorithm"},
      {{"--algo", "fastest"}, "unknown algorithm 'fastest'"},
      {{"--algo", "user"}, "--algo 'user': a plan file runs through PEERREDUCE_PLAN_FILE"},
      {{"--dtype", "int32"}, "--dtype 'int32': takes fp32, fp16, bf16, fp8e4m3 or fp8e5m2"},
      {{"--max-bytes", "lots"}, "--max-bytes 'lots': takes a size"},
      {{"--min-bytes", "2M", "--max-bytes", "1M"}, "--min-bytes is above --max-bytes"},
      {{"--step-factor", "1"}, "--step-factor '1': takes a whole number in 2..1024"},
      {{"--batch", "0"}, "--batch '0'"},
      {{"--skew-us", "-5"}, "--skew-us '-5': takes a whole number in 0..1000000"},
      {{"--fast"}, "unknown option --fast"},
      {{"--machines", "2"}, "--machines needs --eager"},
      {{"--machines", "3", "--eager"}, "--machines 3: 4 ranks do not split into machines of equal rank counts"},
      {{"--machines", "1", "--eager"}, "--machines '1': takes a whole number in 2..4"},
      {{"--machines", "8", "--eager"}, "--machines '8': takes a whole number in 2..4"},
      {{"--machines", "2", "--eager", "--algo", "ring"}, "--machines times each machine strategy"},
      {{"--machines", "2", "--eager", "--batch", "4"}, "--machines times each machine strategy"},
      {{"--machines", "2", "--eager", "--link-mask", "host:all"}, "--machines times each machine strategy"},
  };
  for (const auto& c : cases) {
    auto o = parse(c.args);
    ASSERT_FALSE(o.isOk()) << c.says;
    EXPECT_EQ(o.status().code(), ErrorCode::kInvalidArgument) << c.says;
    EXPECT_NE(o.status().message().find(c.says), std::string::npos) << o.status().message();
  }
}

}  // namespace
}  // namespace peerreduce::bench
