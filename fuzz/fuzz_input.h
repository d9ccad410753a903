// Reading structured values out of a fuzz input: a cursor over the bytes that never fails (past the
// end it yields zeros and empty strings), so every input decodes to something and the targets need no
// error handling of their own. Shared by the targets in fuzz/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace peerreduce::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::size_t remainingBytes() const { return empty() ? 0 : size_ - pos_; }

  std::uint8_t byte() { return empty() ? 0 : data_[pos_++]; }
  std::uint32_t u32() {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value = value << 8 | byte();
    return value;
  }
  // A value in [low, high] (high >= low), from one byte: the ranges used here are small.
  int intIn(int low, int high) { return low + static_cast<int>(byte() % static_cast<unsigned>(high - low + 1)); }

  // Bytes up to the next `separator` (consumed, not returned), or to the end.
  std::string until(char separator) {
    std::string out;
    while (!empty()) {
      const char c = static_cast<char>(data_[pos_++]);
      if (c == separator) break;
      out.push_back(c);
    }
    return out;
  }
  // Up to `count` bytes.
  std::vector<std::byte> bytes(std::size_t count) {
    const std::size_t n = count < remainingBytes() ? count : remainingBytes();
    std::vector<std::byte> out(n);
    if (n > 0) std::memcpy(out.data(), data_ + pos_, n);
    pos_ += n;
    return out;
  }
  std::string rest() {
    std::string out(reinterpret_cast<const char*>(data_) + (empty() ? size_ : pos_), remainingBytes());
    pos_ = size_;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// With PEERREDUCE_FUZZ_VERBOSE set, prints what a target concluded about an input (to check what a
// corpus file reaches); silent otherwise, so fuzzing runs at full speed.
void report(std::string_view what);

// Stops the run with a message when an oracle fails: libFuzzer (and the replay driver) report the
// abort as a crash and keep the input.
[[noreturn]] void oracleFailed(std::string_view what);

}  // namespace peerreduce::fuzz
