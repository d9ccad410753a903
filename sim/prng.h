// The simulator's PRNG: xoshiro256** seeded through splitmix64, with our own bounded draws.
//
// Why not <random>: the standard engines are portable but the distributions are not (libstdc++ and
// libc++ give different numbers for the same seed), and a failing seed must replay bit for bit on any
// machine. Bounded integers use Lemire's multiply-and-reject method, which is unbiased and stable.
#pragma once

#include <cstdint>

namespace peerreduce::sim {

// splitmix64: expands a 64-bit seed into well-mixed state words; also a fine hash of one word.
inline std::uint64_t splitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Derives an independent seed for a sub-stream (e.g. rank r's payload) from a parent seed.
inline std::uint64_t deriveSeed(std::uint64_t parent, std::uint64_t stream) {
  std::uint64_t state = parent ^ (stream * 0xd1342543de82ef95ull);
  splitMix64(state);
  return splitMix64(state);
}

// 128-bit product for Lemire's method; __extension__ keeps -Wpedantic quiet about the GCC/Clang type.
__extension__ using Uint128 = unsigned __int128;

class Prng {
 public:
  explicit Prng(std::uint64_t seed) {
    std::uint64_t state = seed;
    for (auto& word : s_) word = splitMix64(state);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound); bound > 0.
  std::uint64_t below(std::uint64_t bound) {
    Uint128 m = static_cast<Uint128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      // Each try succeeds with probability > 1/2; 128 failures in a row would take 2^-128 luck.
      for (int tries = 0; low < threshold && tries < 128; ++tries) {
        m = static_cast<Uint128>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in [low, high], inclusive. Computed in unsigned arithmetic: high - low may not fit in
  // int64, and the size of the full range (2^64) wraps to 0, which means any 64-bit value.
  std::int64_t between(std::int64_t low, std::int64_t high) {
    const std::uint64_t span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    const std::uint64_t offset = span == ~std::uint64_t{0} ? next() : below(span + 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + offset);
  }

  // Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  bool chance(double probability) { return unit() < probability; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace peerreduce::sim
