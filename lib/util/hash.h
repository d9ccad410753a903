// FNV-1a, 64-bit: a small, portable, deterministic hash for fingerprints (configuration agreement
// across ranks, simulator trace fingerprints). Not for security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace peerreduce {

class Fnv1a {
 public:
  static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ull;  // FNV-1a 64 parameters
  static constexpr std::uint64_t kPrime = 1099511628211ull;

  void addBytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      state_ ^= p[i];
      state_ *= kPrime;
    }
  }
  template <typename T>
  void add(const T& value) {
    addBytes(&value, sizeof(value));
  }
  void addString(std::string_view text) {
    add(text.size());
    addBytes(text.data(), text.size());
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = kOffsetBasis;
};

}  // namespace peerreduce
