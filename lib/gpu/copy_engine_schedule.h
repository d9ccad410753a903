// How a GPU runs a rank's program that has copy-engine copies (Step::copy_engine): host-only, so it is
// unit-tested without a GPU.
//
// A kernel cannot start a copy engine, so such a program runs as a sequence of parts. Each part is one
// launch of the plan interpreter over a range of steps (copy-engine copies skipped) on the operation's
// stream, and, for a part that has copy-engine copies, those copies enqueued beside the launch on side
// streams (one per queue: a peer and a direction), forked from the operation's stream before the launch
// and joined back into it after. A part with copies is a run of data steps no two of which touch the
// same memory with one of them writing (program order between them is then not observable, so running
// them at once keeps the plan's meaning); signals and waits fall between parts, in the interpreter's
// launches. The first part passes the entry fence before any copy is issued, and the last sends the done
// signals after every copy joined, so both are always launches of their own when copies would
// otherwise be first or last.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/types.h"

namespace peerreduce::gpu {

struct EngineCopy {
  std::uint32_t step = 0;  // index in the rank's program
  int queue = 0;           // copyEngineQueue(): the side stream it is enqueued on
};

struct ScheduledPart {
  std::uint32_t begin = 0;  // the interpreter's launch runs steps [begin, end), copy-engine copies skipped
  std::uint32_t end = 0;
  bool has_kernel_work = false;    // a step of the range is not a copy-engine copy (else no launch is needed)
  std::vector<EngineCopy> copies;  // copy-engine copies of the range, in program order
};

// Copies to one peer in one direction queue one after another (the cost model's queue, timing_model.h);
// a local copy is queue 2 * rank.
int copyEngineQueue(const RankProgram& program, const Step& step, int rank);

// Whether an operation runs its copy-engine copies on copy engines: only where they are enabled
// (PEERREDUCE_GPU_COPY_ENGINES, KernelPolicy::copy_engines), the program has some, and no copy has to
// scale what it moves (a floating avg premultiplies what a copy reads from the send buffer, which a copy
// engine cannot; the interpreter then runs the whole program, copies included). Host-staged worlds
// included: a copy engine reaches pinned host memory as it reaches a peer's device memory, and moves
// more over PCIe than the multiprocessors do (docs/ALGORITHMS.md, GPUs without peer access). Every rank
// decides alike: the inputs are the plan, the agreed records and the operation.
bool runsOnCopyEngines(bool enabled, bool has_engine_copies, ReduceOp op, DataType dtype);

// The parts of `rank`'s program, in order; empty when the program has no copy-engine copy (the
// interpreter then runs it in one launch, as any plan).
std::vector<ScheduledPart> scheduleCopyEngineProgram(const RankProgram& program, int rank);

}  // namespace peerreduce::gpu
