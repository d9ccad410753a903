// Positions around a ring of ranks: the rank at position p reads from the rank at p - 1, and positions
// wrap around, so plans name "my predecessor" and "the block that starts two hops back" directly.
#pragma once

#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

namespace peerreduce {

class RingOrder {
 public:
  // `order`: a permutation of 0..n-1 (checked by the caller, algorithms.h checkPermutation).
  explicit RingOrder(std::vector<int> order) : order_(std::move(order)) {}
  // 0, 1, ..., n-1.
  static RingOrder identity(int n) {
    std::vector<int> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    return RingOrder(std::move(order));
  }

  int size() const { return static_cast<int>(order_.size()); }
  int at(int position) const { return order_[static_cast<std::size_t>(wrap(position))]; }
  int positionOf(int rank) const {
    for (int p = 0; p < size(); ++p) {
      if (order_[static_cast<std::size_t>(p)] == rank) return p;
    }
    return -1;
  }
  // "0-2-1-3", starting at position `from`.
  std::string describe(int from = 0) const {
    std::string out;
    for (int p = 0; p < size(); ++p) out += (p ? "-" : "") + std::to_string(at(from + p));
    return out;
  }

 private:
  int wrap(int value) const { return ((value % size()) + size()) % size(); }

  std::vector<int> order_;
};

}  // namespace peerreduce
