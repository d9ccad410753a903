// What the exhaustive conversion tests (float16_test.cc, float8_test.cc) share: fp32 bits and back, hex text,
// and a log that keeps the first few mismatches of a sweep over every pattern.
#pragma once

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

namespace peerreduce::kernels::testing {

inline std::uint32_t floatBits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

inline float floatFromBits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline std::string hex(std::uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// Collects mismatches of an exhaustive sweep and reports a few of them, so a bug does not print every pattern.
class MismatchLog {
 public:
  static constexpr int kMaxReported = 8;

  void add(const std::string& what) {
    if (count_ < kMaxReported) text_ << what << "\n";
    ++count_;
  }
  int count() const { return count_; }
  std::string text() const { return text_.str(); }

 private:
  int count_ = 0;
  std::ostringstream text_;
};

}  // namespace peerreduce::kernels::testing
