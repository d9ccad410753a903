#include "core/collective_algorithms.h"

namespace peerreduce {

bool collectiveHasAlgorithm(Collective collective, Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kOneShot:
    case Algorithm::kRing:
    case Algorithm::kTree:
      return collective != Collective::kAllReduce && isValidCollective(collective);
    case Algorithm::kRecursiveDoubling:
      return collective == Collective::kReduceScatter || collective == Collective::kAllGather;
    case Algorithm::kTwoShot:  // scatter, then all-gather: the copying half of allreduce's two-shot
      return collective == Collective::kBroadcast;
    case Algorithm::kCopyEngineTwoShot:  // allreduce's by copy engine: its gather half, or its scatter half
      return collective != Collective::kAllReduce && isValidCollective(collective);
    default:
      return false;
  }
}

bool anyCollectiveHasAlgorithm(Collective collective, Algorithm algorithm) {
  // A user plan may be written for any collective (tuning tables name it like a built-in).
  if (algorithm == Algorithm::kUser) return isValidCollective(collective);
  if (collective == Collective::kAllReduce) return isValidAlgorithm(algorithm) && algorithm != Algorithm::kAuto;
  return collectiveHasAlgorithm(collective, algorithm);
}

}  // namespace peerreduce
