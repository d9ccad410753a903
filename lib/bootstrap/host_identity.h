// Which ranks share a machine: each rank's host identity, gathered through the bootstrap.
//
// The identity is the host name, or PEERREDUCE_NODE when set (so one machine can act as several for
// tests, and a user can group ranks by hand). Used to choose a rank's GPU by its local rank and, by
// communicators that span machines, to group ranks by machine.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"
#include "util/setting_spec.h"

namespace peerreduce {

// Identities longer than this are refused (they travel in fixed-size blocks).
inline constexpr std::size_t kMaxHostIdentityBytes = 255;

// The PEERREDUCE_NODE setting (a row of the settings registry, defined here where it is read).
const SettingSpec& hostIdentitySetting();

// This process's host identity: PEERREDUCE_NODE if set and not empty, else the host name. kInvalidArgument
// when PEERREDUCE_NODE is longer than kMaxHostIdentityBytes; kUnavailable when the host name is unknown.
// `getenv` is injectable for tests (null: the process environment).
StatusOr<std::string> hostIdentity(const Getenv& getenv = nullptr);

struct HostGroups {
  std::vector<std::string> identity_of_rank;  // by rank
  std::vector<int> node_of_rank;              // machines numbered by their lowest rank's order
  int node_count = 0;
  int local_rank = 0;  // this rank's position among the ranks of its machine
  int local_size = 1;  // ranks on this rank's machine
};

// Collective over `bootstrap`: every rank contributes `mine`; every rank gets the same grouping.
StatusOr<HostGroups> gatherHostGroups(Bootstrap& bootstrap, const std::string& mine, std::chrono::milliseconds timeout);

}  // namespace peerreduce
