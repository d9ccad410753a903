// The shared-memory names this process still has in /dev/shm: a host-placed region's name must be gone
// once every peer mapped it (HostStaging::peersConnected), and a region given up by a fallback to host
// staging must leave none behind.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace peerreduce::testing {

inline std::size_t sharedNamesOfThisProcess() {
  std::size_t names = 0;
  const std::string prefix = "peerreduce-" + std::to_string(::getpid()) + "-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++names;
  }
  return names;
}

}  // namespace peerreduce::testing
