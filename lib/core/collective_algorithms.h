// Which algorithms each collective has: a fact about the collectives that the candidates
// (algorithms/), the settings and the tuning tables (select/tuning_table.h) all check against, so it
// lives in the lowest layer they share.
#pragma once

#include "peerreduce/types.h"

namespace peerreduce {

// Whether `collective` (not allreduce) has a plan of `algorithm`: one-shot (direct), ring and tree for
// every one; recursive doubling (reduce-scatter: recursive halving) for reduce-scatter and all-gather;
// two-shot (scatter, then all-gather) for broadcast.
bool collectiveHasAlgorithm(Collective collective, Algorithm algorithm);

// Whether `collective`, allreduce included, has a plan of `algorithm` (allreduce has every concrete one;
// every collective has kUser, a plan file written for it).
bool anyCollectiveHasAlgorithm(Collective collective, Algorithm algorithm);

}  // namespace peerreduce
