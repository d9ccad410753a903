// Properties of Communicator::allreduceBatch, on simulated worlds of random size (and unchanged on GPUs
// under mpirun, where each batch's bits are also compared with the simulator's).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "batch_case.h"
#include "generators.h"
#include "sim/prng.h"

namespace peerreduce::testing {
namespace {

Config batchConfig() {
  Config config;
  config.scratch_bytes = std::size_t{1} << 20;
  config.memory.pool_bytes = std::size_t{4} << 20;
  return config;
}

// Item sizes: empty, tiny, around a vector, small, mid.
rc::Gen<std::size_t> genItemCount() {
  return uniform(
      rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                           {3, rc::gen::inRange<std::size_t>(1, 9)},
                                           {3, rc::gen::element<std::size_t>(15, 16, 17, 31, 33, 63, 64, 65)},
                                           {8, rc::gen::inRange<std::size_t>(9, 1024)},
                                           {1, rc::gen::inRange<std::size_t>(1024, 8192)}}));
}

// Now and then one large item: above the one-shot's 256 KiB from 2-byte elements on (a group of it runs
// as a two-shot), above the two-shot's 1 MiB from 4-byte elements on (it runs as an ordinary allreduce
// in its place).
rc::Gen<std::size_t> genItemCountWithLarge() {
  return rc::gen::weightedOneOf<std::size_t>(
      {{100, genItemCount()}, {1, rc::gen::inRange<std::size_t>(262200, 263000)}});
}

rc::Gen<BatchCaseItem> genItem() {
  return rc::gen::build<BatchCaseItem>(
      rc::gen::set(&BatchCaseItem::count, genItemCountWithLarge()),
      rc::gen::set(&BatchCaseItem::in_place, rc::gen::arbitrary<bool>()),
      rc::gen::set(&BatchCaseItem::offset, uniform(rc::gen::inRange<std::size_t>(0, 4))));
}

rc::Gen<BatchCase> genBatchCase() {
  // Worlds of 1 to 8 ranks (or the hardware's): the batch's logic does not depend on the world size
  // beyond what the allreduce properties cover.
  const int fixed = worldProvider().fixedWorldSize();
  return rc::gen::mapcat(fixed > 0 ? rc::gen::just(fixed) : uniform(rc::gen::inRange(1, 9)), [](int world_size) {
    return rc::gen::build<BatchCase>(
        rc::gen::set(&BatchCase::world_size, rc::gen::just(world_size)), rc::gen::set(&BatchCase::dtype, genDataType()),
        rc::gen::set(&BatchCase::op, genReduceOp()),
        rc::gen::set(&BatchCase::items, rc::gen::mapcat(uniform(rc::gen::inRange<std::size_t>(0, 100)),
                                                        [](std::size_t n) {
                                                          return rc::gen::container<std::vector<BatchCaseItem>>(
                                                              n, genItem());
                                                        })),
        rc::gen::set(&BatchCase::seed, uniform(rc::gen::arbitrary<std::uint64_t>())));
  });
}

// Any batch (up to 100 items, so groups split by item count as well as by bytes) gives every item the
// reference result, identical bits on every rank, untouched memory around and between the items, and
// no race.
RC_GTEST_PROP(BatchProperty, EveryItemMatchesReferenceOnEveryRank, ()) {
  const BatchCase c = *genBatchCase();
  RC_CLASSIFY(c.items.size() > kMaxBatchItemsPerSubmit, "more items than one operation takes");
  auto world = worldProvider().acquire(c.world_size, batchConfig(), sim::deriveSeed(c.seed, 1));
  RC_ASSERT(world.status().toString() == "ok");
  const CaseOutcome outcome = runBatchCase(**world, c);
  RC_ASSERT(outcome.problem == "");
}

}  // namespace
}  // namespace peerreduce::testing
