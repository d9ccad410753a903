#include "gpu/host_staging.h"

#include <algorithm>

namespace peerreduce::gpu {

bool placeRegionInHost(const std::vector<std::uint8_t>& forced, int rank, int world_size, bool device_reaches_all) {
  if (!device_reaches_all) return true;
  const auto n = static_cast<std::size_t>(world_size);
  if (forced.size() != n * n) return false;
  for (std::size_t peer = 0; peer < n; ++peer) {
    if (peer != static_cast<std::size_t>(rank) && forced[static_cast<std::size_t>(rank) * n + peer] != 0) return true;
  }
  return false;
}

Status addHostStagedPairs(std::vector<std::uint8_t>& forced, const std::vector<std::uint8_t>& pairs, int world_size) {
  const auto n = static_cast<std::size_t>(world_size < 0 ? 0 : world_size);
  if (pairs.size() != n * n || (!forced.empty() && forced.size() != n * n)) {
    return invalidArgumentError("host-staged pairs of " + std::to_string(pairs.size()) + " entries (and " +
                                std::to_string(forced.size()) + " forced) for a world of " + std::to_string(n) + " x " +
                                std::to_string(n));
  }
  if (forced.empty()) forced.assign(n * n, 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) forced[i] = (forced[i] != 0 || pairs[i] != 0) ? 1 : 0;
  return Status::ok();
}

StatusOr<PeerPath> choosePeerPath(const PeerReach& reach) {
  const bool host_link = reach.forced || !reach.peer_access;
  if (!host_link) {
    return reach.peer_placement == RegionPlacement::kHost ? PeerPath::kHostMapped : PeerPath::kDirect;
  }
  const auto side = [&](int who, RegionPlacement placement) -> Status {
    if (placement == RegionPlacement::kHost) return Status::ok();
    return unavailableError("rank " + std::to_string(reach.rank) + " mapping rank " + std::to_string(reach.peer) +
                            ": the pair needs a host-staged link (" +
                            (reach.forced ? "the link mask forces it" : "no peer access between their devices") +
                            ") but rank " + std::to_string(who) +
                            " placed its memory on its device (it found peer access to every device); set "
                            "PEERREDUCE_LINK_MASK=host:" +
                            std::to_string(reach.rank) + "-" + std::to_string(reach.peer) + " on every rank");
  };
  PR_RETURN_IF_ERROR(side(reach.peer, reach.peer_placement));
  PR_RETURN_IF_ERROR(side(reach.rank, reach.own_placement));
  return PeerPath::kHostMapped;
}

KernelPolicy hostStagedKernelPolicy(KernelPolicy policy, int world_size) {
  const std::uint64_t cap = world_size == 2 && policy.host_lines_two_rank_default ? kDefaultHostLinesTwoRankMaxBytes
                                                                                  : policy.host_lines_max_bytes;
  // This world size's limits, each capped; they then hold as plain limits (no two-rank default).
  policy.max_bytes = std::min(oneShotLinesMaxBytes(policy, world_size), cap);
  policy.two_rank_default = false;
  policy.max_two_shot_bytes = std::min(policy.max_two_shot_bytes, cap);
  policy.collective_max_bytes = std::min(collectiveLinesMaxBytes(policy, world_size), cap);
  policy.collective_two_rank_default = false;
  policy.push_min_bytes = 0;
  if (!policy.push_host) {
    policy.push_one_shot_min_bytes = 0;
    policy.push_collective_min_bytes = 0;
    return policy;
  }
  if (policy.push_one_shot_min_default) policy.push_one_shot_min_bytes = kDefaultHostPushOneShotMinBytes;
  if (policy.push_collective_min_default) policy.push_collective_min_bytes = kDefaultHostPushCollectiveMinBytes;
  return policy;
}

std::vector<std::int32_t> stagedChunkAccesses(const Plan& plan, int rank, const std::vector<bool>& host_placed) {
  std::vector<std::int32_t> chunks;
  const int first_private = firstPrivateSlot(plan);
  const auto in_host = [&](const BufferRef& ref) {
    // A private slot is kept on the device (gpu_transport.cc), whatever its rank's placement.
    return ref.kind == BufferKind::kScratch && ref.slot < first_private && ref.rank >= 0 &&
           static_cast<std::size_t>(ref.rank) < host_placed.size() && host_placed[static_cast<std::size_t>(ref.rank)];
  };
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  for (const Step& step : program.steps) {
    if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) continue;
    if (in_host(step.dst)) chunks.push_back(step.chunk);
    for (std::uint32_t i = 0; i < step.src_count; ++i) {
      if (in_host(program.sources[step.src_begin + i])) chunks.push_back(step.chunk);
    }
  }
  return chunks;
}

std::uint64_t stagedBytes(const std::vector<std::int32_t>& chunks, const ChunkLayout& layout, std::size_t elem_size) {
  std::uint64_t bytes = 0;
  for (const std::int32_t index : chunks) {
    bytes += static_cast<std::uint64_t>(layout.size(layout.chunkOf(index))) * elem_size;
  }
  return bytes;
}

std::uint64_t lineStagedBytes(KernelChoice choice, std::uint64_t bytes, int rank, int root,
                              const std::vector<bool>& host_placed) {
  constexpr std::uint64_t kLineBytesPerDataByte = 2;  // {data, flag} in each 8-byte half of a 16-byte line
  constexpr std::uint64_t kPresenceLineBytes = 16;
  const auto n = static_cast<std::uint64_t>(host_placed.size());
  if (n < 2 || rank < 0 || static_cast<std::uint64_t>(rank) >= n) return 0;
  std::uint64_t host_peers = 0;  // peers whose lines are in host memory
  for (std::uint64_t q = 0; q < n; ++q) host_peers += q != static_cast<std::uint64_t>(rank) && host_placed[q] ? 1 : 0;
  const bool own_host = host_placed[static_cast<std::size_t>(rank)];
  // Each peer's lines written (where host-placed) and each peer's lines read here (where this is).
  const auto exchange = [&](std::uint64_t sent_to_each, std::uint64_t taken_from_each) {
    return host_peers * sent_to_each + (own_host ? (n - 1) * taken_from_each : 0);
  };
  const std::uint64_t lines = kLineBytesPerDataByte * bytes;
  switch (choice) {
    case KernelChoice::kOneShotLines:
    case KernelChoice::kReduceScatterLines:
    case KernelChoice::kAllGatherLines:
      return exchange(lines, lines);
    case KernelChoice::kTwoShotLines: {
      const std::uint64_t shard = lines / n;  // a shard to its owner, then the owner's result back
      return exchange(2 * shard, 2 * shard);
    }
    case KernelChoice::kBroadcastLines:
      // The root sends the data and takes the n - 1 receivers' presence lines; a receiver sends every peer
      // a presence line and takes the data and the other n - 2 receivers' presence lines.
      if (rank == root) return host_peers * lines + (own_host ? (n - 1) * kPresenceLineBytes : 0);
      return host_peers * kPresenceLineBytes + (own_host ? lines + (n - 2) * kPresenceLineBytes : 0);
    default:
      return 0;
  }
}

}  // namespace peerreduce::gpu
