// Small helpers the memory pools share: the power-of-two test of their alignments and the "rank N: " that
// starts their errors (nothing for a pool not tied to a rank, rank < 0).
#pragma once

#include <cstddef>
#include <string>

namespace peerreduce {

inline bool isPowerOfTwo(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

inline std::string rankPrefix(int rank) { return rank >= 0 ? "rank " + std::to_string(rank) + ": " : std::string(); }

}  // namespace peerreduce
