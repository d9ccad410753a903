#include "peerreduce/config.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "util/hash.h"
#include "util/parse.h"

namespace peerreduce {
namespace {

const char* systemGetenv(const char* name) { return std::getenv(name); }

StatusOr<std::int64_t> parseInteger(const std::string& text, std::int64_t low, std::int64_t high, const char* what) {
  if (text.empty()) return invalidArgumentError(std::string(what) + " is empty");
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return invalidArgumentError(std::string(what) + "='" + text + "' is not a whole number");
    }
    const std::int64_t digit = c - '0';
    if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
      return invalidArgumentError(std::string(what) + "='" + text + "' is too large");
    }
    value = value * 10 + digit;
  }
  if (value < low || value > high) {
    return invalidArgumentError(std::string(what) + "=" + text + " is outside " + std::to_string(low) + ".." +
                                std::to_string(high));
  }
  return value;
}

}  // namespace

StatusOr<Config> Config::fromEnvironment(const Config& base, const std::function<const char*(const char*)>& getenv) {
  const auto read = [&](const char* name) -> const char* { return getenv ? getenv(name) : systemGetenv(name); };
  Config config = base;
  if (const char* v = read("PEERREDUCE_ALGO"); v != nullptr && *v != '\0') {
    auto algorithm = parseAlgorithm(v);
    if (!algorithm.isOk()) return algorithm.status().withContext("PEERREDUCE_ALGO");
    config.algorithm = *algorithm;
  }
  if (const char* v = read("PEERREDUCE_TIMEOUT_MS"); v != nullptr && *v != '\0') {
    auto ms = parseInteger(v, 1, kMaxTimeoutMs, "PEERREDUCE_TIMEOUT_MS");
    if (!ms.isOk()) return ms.status();
    config.timeout = std::chrono::milliseconds(*ms);
  }
  if (const char* v = read("PEERREDUCE_SCRATCH_BYTES"); v != nullptr && *v != '\0') {
    auto bytes = parseByteSize(v);
    if (!bytes.isOk()) return bytes.status().withContext("PEERREDUCE_SCRATCH_BYTES");
    config.scratch_bytes = *bytes;
  }
  if (const char* v = read("PEERREDUCE_VERIFY_PLANS"); v != nullptr && *v != '\0') {
    const std::string s = v;
    if (s == "1" || s == "true" || s == "on") {
      config.verify_plans = true;
    } else if (s == "0" || s == "false" || s == "off") {
      config.verify_plans = false;
    } else {
      return invalidArgumentError("PEERREDUCE_VERIFY_PLANS='" + s + "' is not 1/0/true/false/on/off");
    }
  }
  if (const char* v = read("PEERREDUCE_LINK_MASK"); v != nullptr) config.link_mask = v;
  if (const char* v = read("PEERREDUCE_TUNING_FILE"); v != nullptr) config.tuning_file = v;
  auto memory = MemorySettings::fromEnvironment(config.memory, read);
  if (!memory.isOk()) return memory.status();
  config.memory = *memory;
  PR_RETURN_IF_ERROR(config.validate());
  return config;
}

StatusOr<Config> Config::fromEnvironment() { return fromEnvironment(Config{}); }

Status Config::validate() const {
  if (!isValidAlgorithm(algorithm)) {
    return invalidArgumentError("algorithm value " + std::to_string(static_cast<int>(algorithm)) + " is not valid");
  }
  if (timeout.count() < 1 || timeout.count() > kMaxTimeoutMs) {
    return invalidArgumentError("timeout of " + std::to_string(timeout.count()) + " ms is outside 1.." +
                                std::to_string(kMaxTimeoutMs) + " ms (PEERREDUCE_TIMEOUT_MS)");
  }
  if (scratch_bytes < kMinScratchBytes || scratch_bytes > kMaxScratchBytes) {
    return invalidArgumentError("scratch of " + std::to_string(scratch_bytes) + " bytes is outside " +
                                std::to_string(kMinScratchBytes) + ".." + std::to_string(kMaxScratchBytes) +
                                " (PEERREDUCE_SCRATCH_BYTES)");
  }
  // The mask's syntax is checked here; its ranks against the world size at communicator creation.
  constexpr std::size_t kMaxMaskChars = 16384;  // all 2016 pairs of 64 ranks at 6 characters each fit
  if (link_mask.size() > kMaxMaskChars) {
    return invalidArgumentError("link mask of " + std::to_string(link_mask.size()) + " characters exceeds " +
                                std::to_string(kMaxMaskChars) + " (PEERREDUCE_LINK_MASK)");
  }
  for (char c : link_mask) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == ',')) {
      return invalidArgumentError("link mask '" + link_mask.substr(0, 64) +
                                  "' may hold only digits, '-' and ',' (e.g. 0-1,2-3) (PEERREDUCE_LINK_MASK)");
    }
  }
  return memory.validate();
}

std::uint64_t Config::fingerprint() const {
  Fnv1a hash;
  hash.add(static_cast<int>(algorithm));
  hash.add(static_cast<std::int64_t>(timeout.count()));
  hash.add(scratch_bytes);
  hash.add(verify_plans);
  hash.addString(link_mask);
  hash.addString(tuning_file);
  // The pool is symmetric: ranks with different pool settings would place blocks at different offsets.
  hash.add(memory.pool_bytes);
  hash.add(memory.pool_quota_bytes);
  hash.add(memory.pool_alignment_bytes);
  hash.add(memory.defrag_threshold);
  hash.add(memory.pinned_limit_bytes);
  return hash.value();
}

std::string Config::describe() const {
  return "algorithm=" + std::string(algorithmName(algorithm)) + " timeout_ms=" + std::to_string(timeout.count()) +
         " scratch_bytes=" + std::to_string(scratch_bytes) + " verify_plans=" + (verify_plans ? "1" : "0") +
         (link_mask.empty() ? "" : " link_mask=" + link_mask) +
         (tuning_file.empty() ? "" : " tuning_file=" + tuning_file) +
         // Like the optional settings above, the memory settings are listed only when not the defaults.
         (memory == MemorySettings{} ? "" : " " + memory.describe());
}

}  // namespace peerreduce
