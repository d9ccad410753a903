// Running a batch of campaign scenarios in worker processes.
//
// Scenarios are independent, but threads of one process do not speed them up: each scenario maps and
// unmaps memory and starts rank threads, and those serialise on the process's address space (page
// tables, TLB shootdowns). Forked workers do not share one, so `jobs` workers run `jobs` scenarios at
// a time. Each worker runs every jobs-th seed of the batch, then sends its results to the parent
// through a pipe; the parent returns them in seed order, so the report does not depend on `jobs`.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/status.h"
#include "scenario.h"

namespace peerreduce::sim::campaign {

// Results of seeds first_seed .. first_seed + count - 1, in order. kInternal naming the worker when a
// worker dies, sends a malformed result or outlives `deadline_seconds`.
StatusOr<std::vector<ScenarioResult>> runScenariosInWorkers(std::uint64_t first_seed, std::uint64_t count, int jobs,
                                                            const ScenarioOptions& options, double deadline_seconds);

// The wire form of a result (exposed for the round-trip test).
std::vector<std::byte> encodeResult(const ScenarioResult& result);
// Decodes one result at `*offset`, advancing it; false when the bytes are not a whole result.
bool decodeResult(const std::vector<std::byte>& bytes, std::size_t* offset, ScenarioResult* result);

}  // namespace peerreduce::sim::campaign
