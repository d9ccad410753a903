#include "gpu/copy_engine_schedule.h"

#include <algorithm>

namespace peerreduce::gpu {
namespace {

bool isData(const Step& step) { return step.kind == StepKind::kCopy || step.kind == StepKind::kReduce; }

// Whether two references may be the same memory: the same scratch slot, or the same chunk of the
// rank's user buffers (input and output alias when the call is in place).
bool overlaps(const BufferRef& a, int a_chunk, const BufferRef& b, int b_chunk) {
  if (a.rank != b.rank) return false;
  const bool a_scratch = a.kind == BufferKind::kScratch;
  const bool b_scratch = b.kind == BufferKind::kScratch;
  if (a_scratch || b_scratch) return a_scratch && b_scratch && a.slot == b.slot;
  return a_chunk == b_chunk;
}

// Whether `later` may run at once with `earlier` without changing the program's meaning: neither writes
// what the other touches.
bool independent(const RankProgram& program, const Step& earlier, const Step& later) {
  auto touches = [&](const Step& step, const BufferRef& ref, int chunk) {
    if (overlaps(step.dst, step.chunk, ref, chunk)) return true;
    for (std::uint32_t i = 0; i < step.src_count; ++i) {
      if (overlaps(program.sources[step.src_begin + i], step.chunk, ref, chunk)) return true;
    }
    return false;
  };
  return !touches(earlier, later.dst, later.chunk) && !touches(later, earlier.dst, earlier.chunk);
}

}  // namespace

bool runsOnCopyEngines(bool enabled, bool has_engine_copies, ReduceOp op, DataType dtype) {
  return enabled && has_engine_copies && !(op == ReduceOp::kAvg && isFloatingPoint(dtype));
}

int copyEngineQueue(const RankProgram& program, const Step& step, int rank) {
  if (step.dst.rank != rank) return 2 * step.dst.rank + 1;
  const int source = step.src_count > 0 ? program.sources[step.src_begin].rank : rank;
  return 2 * source;
}

std::vector<ScheduledPart> scheduleCopyEngineProgram(const RankProgram& program, int rank) {
  const auto steps = static_cast<std::uint32_t>(program.steps.size());
  if (std::none_of(program.steps.begin(), program.steps.end(), [](const Step& s) { return s.copy_engine; })) return {};
  std::vector<ScheduledPart> parts;
  // Launch-only parts grow until a data run with a copy-engine copy starts; such a run becomes a part of
  // its own, cut where a step depends on an earlier step of the run.
  auto kernelPart = [&](std::uint32_t at) -> ScheduledPart& {
    if (parts.empty() || !parts.back().copies.empty()) parts.push_back(ScheduledPart{at, at, false, {}});
    return parts.back();
  };
  kernelPart(0);  // the entry fence, before any copy
  std::uint32_t i = 0;
  while (i < steps) {
    if (!isData(program.steps[i])) {
      ScheduledPart& part = kernelPart(i);
      part.end = i + 1;
      part.has_kernel_work = true;
      ++i;
      continue;
    }
    // A run of mutually independent data steps, [i, j).
    std::uint32_t j = i + 1;
    bool engine = program.steps[i].copy_engine;
    while (j < steps && isData(program.steps[j])) {
      bool free = true;
      for (std::uint32_t k = i; k < j && free; ++k) free = independent(program, program.steps[k], program.steps[j]);
      if (!free) break;
      engine = engine || program.steps[j].copy_engine;
      ++j;
    }
    if (!engine) {
      ScheduledPart& part = kernelPart(i);
      part.end = j;
      part.has_kernel_work = true;
    } else {
      ScheduledPart part{i, j, false, {}};
      for (std::uint32_t k = i; k < j; ++k) {
        const Step& step = program.steps[k];
        if (step.copy_engine) {
          part.copies.push_back(EngineCopy{k, copyEngineQueue(program, step, rank)});
        } else {
          part.has_kernel_work = true;
        }
      }
      parts.push_back(std::move(part));
    }
    i = j;
  }
  kernelPart(steps);  // the done signals, after every copy joined
  return parts;
}

}  // namespace peerreduce::gpu
