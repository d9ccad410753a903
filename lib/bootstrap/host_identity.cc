// Host identities and the grouping of ranks by machine: see host_identity.h.
#include "bootstrap/host_identity.h"

#include <unistd.h>

#include <array>
#include <cstring>
#include <optional>

namespace peerreduce {

const SettingSpec& hostIdentitySetting() {
  static const SettingSpec spec = [] {
    SettingSpec s;
    s.name = "PEERREDUCE_NODE";
    s.kind = SettingKind::kText;
    s.agreement = SettingAgreement::kLocal;
    s.noun = "machine name";
    s.max_chars = kMaxHostIdentityBytes;
    s.default_value = std::string();
    s.example = "node-a";
    s.help =
        "the name of this rank's machine, grouping ranks by machine (the host name when unset): ranks with "
        "equal names share a machine, so one machine can act as several";
    return s;
  }();
  return spec;
}

StatusOr<std::string> hostIdentity(const Getenv& getenv) {
  PR_ASSIGN_OR_RETURN(const std::optional<SettingValue> named, readSetting(hostIdentitySetting(), getenv));
  if (named.has_value()) return std::get<std::string>(*named);
  std::array<char, kMaxHostIdentityBytes + 1> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) {
    return unavailableError(std::string("cannot read this machine's host name (") + std::strerror(errno) +
                            "); set PEERREDUCE_NODE to name the machine");
  }
  return std::string(name.data());
}

StatusOr<HostGroups> gatherHostGroups(Bootstrap& bootstrap, const std::string& mine,
                                      std::chrono::milliseconds timeout) {
  if (mine.empty() || mine.size() > kMaxHostIdentityBytes) {
    return invalidArgumentError("host identity of " + std::to_string(mine.size()) + " characters; 1.." +
                                std::to_string(kMaxHostIdentityBytes) + " are accepted");
  }
  constexpr std::size_t kBlock = kMaxHostIdentityBytes + 1;  // NUL-padded
  std::array<std::byte, kBlock> block{};
  std::memcpy(block.data(), mine.data(), mine.size());
  const int n = bootstrap.size();
  std::vector<std::byte> all(kBlock * static_cast<std::size_t>(n));
  PR_RETURN_IF_ERROR(bootstrap.allGather(block, all, timeout));
  HostGroups groups;
  groups.node_of_rank.assign(static_cast<std::size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    const char* text = reinterpret_cast<const char*>(all.data() + kBlock * static_cast<std::size_t>(r));
    const std::size_t length = strnlen(text, kBlock);
    if (length == 0 || length == kBlock) {
      return corruptError("rank " + std::to_string(r) + " sent a host identity that is empty or not terminated");
    }
    groups.identity_of_rank.emplace_back(text, length);
  }
  const int me = bootstrap.rank();
  for (int r = 0; r < n; ++r) {  // O(n^2) over at most kMaxWorldSize ranks
    const auto ru = static_cast<std::size_t>(r);
    for (int earlier = 0; earlier < r && groups.node_of_rank[ru] < 0; ++earlier) {
      if (groups.identity_of_rank[static_cast<std::size_t>(earlier)] == groups.identity_of_rank[ru]) {
        groups.node_of_rank[ru] = groups.node_of_rank[static_cast<std::size_t>(earlier)];
      }
    }
    if (groups.node_of_rank[ru] < 0) groups.node_of_rank[ru] = groups.node_count++;
  }
  groups.local_rank = 0;
  groups.local_size = 0;
  for (int r = 0; r < n; ++r) {
    if (groups.node_of_rank[static_cast<std::size_t>(r)] != groups.node_of_rank[static_cast<std::size_t>(me)]) continue;
    if (r < me) ++groups.local_rank;
    ++groups.local_size;
  }
  return groups;
}

}  // namespace peerreduce
