// Runs one body per rank, each on a thread of its own (bootstrap collectives need every rank at once), and
// returns each rank's Status in rank order.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce::testing {

inline std::vector<Status> onEveryRank(int size, const std::function<Status(int)>& body) {
  std::vector<Status> results(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = body(r); });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace peerreduce::testing
