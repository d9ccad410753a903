// RapidCheck generators for allreduce cases: world sizes, counts and layouts that find bugs.
#pragma once

#include <rapidcheck.h>

#include "allreduce_case.h"
#include "world_provider.h"

namespace peerreduce::testing {

// RapidCheck scales most generators with the test's size, which starts at 0: early cases would all
// be the first dtype, the smallest world, offset 0. Drawing at nominal size makes every choice
// uniform from the first case on (shrinking still works).
template <typename T>
rc::Gen<T> uniform(rc::Gen<T> gen) {
  return rc::gen::resize(rc::kNominalSize, std::move(gen));
}

// World sizes: mostly small (fast, and where most bugs show), some medium, and a few large ones
// around the powers of two where folding changes (each new size costs plan verification and a
// selector table, so large sizes come from a fixed set).
inline rc::Gen<int> genWorldSize() {
  // On hardware the world is the MPI processes: one size only.
  if (const int fixed = worldProvider().fixedWorldSize(); fixed > 0) return rc::gen::just(fixed);
  return uniform(rc::gen::weightedOneOf<int>({{6, rc::gen::inRange(1, 9)},
                                              {3, rc::gen::inRange(9, 17)},
                                              {1, rc::gen::element(17, 23, 31, 32, 33, 47, 63, 64)}}));
}

// Counts: 0, 1, primes, multiples of the world size and their neighbours, small, and (for small
// worlds) large enough to need several segments of scratch.
inline rc::Gen<std::size_t> genCount(int world_size) {
  const std::size_t n = static_cast<std::size_t>(world_size);
  auto near_multiple =
      rc::gen::map(rc::gen::pair(rc::gen::inRange<std::size_t>(1, 200), rc::gen::inRange(-1, 2)),
                   [n](std::pair<std::size_t, int> p) {
                     return p.first * n + static_cast<std::size_t>(static_cast<long>(p.second) + 1) - 1;
                   });
  auto primes = rc::gen::element<std::size_t>(2, 3, 5, 7, 11, 13, 31, 61, 127, 251, 509, 1021, 4093, 8191, 65521);
  auto zero = rc::gen::just<std::size_t>(0);
  auto one = rc::gen::just<std::size_t>(1);
  auto small = rc::gen::inRange<std::size_t>(2, 4096);
  if (world_size > 16) {
    return uniform(
        rc::gen::weightedOneOf<std::size_t>({{1, zero}, {1, one}, {3, primes}, {3, near_multiple}, {6, small}}));
  }
  auto large = rc::gen::inRange<std::size_t>(4096, 300000);
  return uniform(rc::gen::weightedOneOf<std::size_t>(
      {{1, zero}, {1, one}, {3, primes}, {3, near_multiple}, {6, small}, {1, large}}));
}

// Small worlds (1..16 ranks, or the hardware's) and counts below 4096 elements: the cheap cases, so a
// CI run can afford many thousands of them; the large ones come from genAllreduceCase.
inline rc::Gen<int> genSmallWorldSize() {
  if (const int fixed = worldProvider().fixedWorldSize(); fixed > 0) return rc::gen::just(fixed);
  return uniform(rc::gen::inRange(1, 17));
}

inline rc::Gen<std::size_t> genSmallCount(int world_size) {
  const std::size_t n = static_cast<std::size_t>(world_size);
  auto near_multiple = rc::gen::map(
      rc::gen::pair(rc::gen::inRange<std::size_t>(1, 64), rc::gen::inRange(-1, 2)), [n](std::pair<std::size_t, int> p) {
        return p.first * n + static_cast<std::size_t>(static_cast<long>(p.second) + 1) - 1;
      });
  auto primes = rc::gen::element<std::size_t>(2, 3, 5, 7, 11, 13, 31, 61, 127, 251, 509, 1021);
  return uniform(rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                                      {1, rc::gen::just<std::size_t>(1)},
                                                      {3, primes},
                                                      {3, near_multiple},
                                                      {6, rc::gen::inRange<std::size_t>(2, 4096)}}));
}

inline rc::Gen<DataType> genDataType() {
  return uniform(rc::gen::element(DataType::kInt8, DataType::kUint8, DataType::kInt32, DataType::kUint32,
                                  DataType::kInt64, DataType::kUint64, DataType::kFloat16, DataType::kBFloat16,
                                  DataType::kFloat32, DataType::kFloat64, DataType::kFloat8E4M3,
                                  DataType::kFloat8E5M2));
}

inline rc::Gen<ReduceOp> genReduceOp() {
  return uniform(rc::gen::element(ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAvg));
}

inline rc::Gen<Algorithm> genAlgorithm() {
  return uniform(rc::gen::element(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                  Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner,
                                  Algorithm::kCopyEngineTwoShot));
}

// Every allreduce algorithm a forced setting can pick, the relay tree included, and auto.
inline rc::Gen<Algorithm> genAnyAlgorithm() {
  return uniform(rc::gen::element(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                  Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner, Algorithm::kTree,
                                  Algorithm::kCopyEngineTwoShot));
}

inline rc::Gen<DataType> genFloatDataType() {
  return uniform(rc::gen::element(DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
                                  DataType::kFloat8E4M3, DataType::kFloat8E5M2));
}

inline rc::Gen<AllreduceCase> genAllreduceCase(bool small = false) {
  return rc::gen::mapcat(small ? genSmallWorldSize() : genWorldSize(), [small](int world_size) {
    return rc::gen::build<AllreduceCase>(
        rc::gen::set(&AllreduceCase::world_size, rc::gen::just(world_size)),
        rc::gen::set(&AllreduceCase::count, small ? genSmallCount(world_size) : genCount(world_size)),
        rc::gen::set(&AllreduceCase::dtype, genDataType()), rc::gen::set(&AllreduceCase::op, genReduceOp()),
        rc::gen::set(&AllreduceCase::algorithm, genAlgorithm()),
        rc::gen::set(&AllreduceCase::in_place, rc::gen::arbitrary<bool>()),
        rc::gen::set(&AllreduceCase::send_offset, uniform(rc::gen::inRange<std::size_t>(0, 8))),
        rc::gen::set(&AllreduceCase::recv_offset, uniform(rc::gen::inRange<std::size_t>(0, 8))),
        rc::gen::set(&AllreduceCase::seed, uniform(rc::gen::arbitrary<std::uint64_t>())));
  });
}

}  // namespace peerreduce::testing
