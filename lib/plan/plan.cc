#include "peerreduce/plan.h"

#include <algorithm>
#include <cstdio>

namespace peerreduce {
namespace {

// Chunks start on 16-byte boundaries (relative to the buffer start) so GPU kernels can move whole
// 16-byte vectors inside a chunk; 16 bytes is the widest load every supported GPU issues per thread.
constexpr std::size_t kChunkAlignBytes = 16;

std::string describeRef(const BufferRef& ref) {
  char buf[48] = "?";  // stays "?" for a kind outside the enum (a corrupt step being described)
  switch (ref.kind) {
    case BufferKind::kInput:
      std::snprintf(buf, sizeof(buf), "in%d", ref.rank);
      break;
    case BufferKind::kOutput:
      std::snprintf(buf, sizeof(buf), "out%d", ref.rank);
      break;
    case BufferKind::kScratch:
      std::snprintf(buf, sizeof(buf), "s%d.%d", ref.rank, ref.slot);
      break;
  }
  return buf;
}

}  // namespace

int blocksOf(Collective collective, int world_size) {
  return collective == Collective::kReduceScatter || collective == Collective::kAllGather ? world_size : 1;
}

bool holdsEveryBlock(Collective collective, BufferKind kind) {
  if (collective == Collective::kReduceScatter) return kind != BufferKind::kOutput;
  if (collective == Collective::kAllGather) return kind != BufferKind::kInput;
  return true;
}

std::size_t blockStrideOf(Collective collective, BufferKind kind, std::size_t block_stride) {
  return holdsEveryBlock(collective, kind) ? block_stride : 0;
}

std::size_t userChunkOffset(Collective collective, BufferKind kind, const ChunkLayout& layout, std::size_t block_stride,
                            int index) {
  return static_cast<std::size_t>(layout.blockOf(index)) * blockStrideOf(collective, kind, block_stride) +
         layout.begin(layout.chunkOf(index));
}

std::vector<std::uint32_t> signalCounts(const Plan& plan) {
  const std::size_t n = static_cast<std::size_t>(plan.world_size);
  const std::size_t flags = static_cast<std::size_t>(plan.num_flags);
  std::vector<std::uint32_t> counts(n * n * flags, 0);
  // Programs beyond the world size (a malformed plan) have no counters either.
  for (std::size_t writer = 0; writer < plan.programs.size() && writer < n; ++writer) {
    for (const Step& step : plan.programs[writer].steps) {
      if (step.kind != StepKind::kSignal) continue;
      // A peer or flag out of range has no counter; the verifier reports such steps, so skip them here
      // rather than write outside the table.
      if (step.peer < 0 || step.peer >= plan.world_size || step.flag < 0 || step.flag >= plan.num_flags) continue;
      const std::size_t holder = static_cast<std::size_t>(step.peer);
      counts[(holder * n + writer) * flags + static_cast<std::size_t>(step.flag)] += 1;
    }
  }
  return counts;
}

ChunkLayout ChunkLayout::make(std::size_t count, int num_chunks, std::size_t elem_size) {
  ChunkLayout layout;
  layout.count = count;
  layout.num_chunks = std::max(num_chunks, 1);
  layout.align_elems = std::max<std::size_t>(1, kChunkAlignBytes / std::max<std::size_t>(elem_size, 1));
  const std::size_t chunks = static_cast<std::size_t>(layout.num_chunks);
  const std::size_t even = count / chunks + (count % chunks != 0 ? 1 : 0);
  layout.chunk_capacity = (even + layout.align_elems - 1) / layout.align_elems * layout.align_elems;
  return layout;
}

std::size_t ChunkLayout::begin(int chunk) const {
  return std::min(static_cast<std::size_t>(chunk) * chunk_capacity, count);
}

std::size_t ChunkLayout::size(int chunk) const {
  const std::size_t b = begin(chunk);
  return std::min(b + chunk_capacity, count) - b;
}

std::size_t scratchSlotBytes(const ChunkLayout& layout, std::size_t elem_size) {
  const std::size_t raw = layout.chunk_capacity * elem_size;
  return (raw + kScratchSlotAlignBytes - 1) / kScratchSlotAlignBytes * kScratchSlotAlignBytes;
}

std::size_t scratchBytes(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size) {
  return static_cast<std::size_t>(plan.scratch_slots) * scratchSlotBytes(layout, elem_size);
}

std::string describeStep(const RankProgram& program, const Step& step) {
  char buf[96];
  std::string out;
  switch (step.kind) {
    case StepKind::kCopy:
    case StepKind::kReduce: {
      out = step.kind == StepKind::kCopy ? (step.copy_engine ? "ce-copy c" : "copy c") : "reduce c";
      out += std::to_string(step.chunk) + " [";
      for (std::uint32_t i = 0; i < step.src_count; ++i) {
        if (i) out += ' ';
        const std::size_t index = step.src_begin + i;
        out += index < program.sources.size() ? describeRef(program.sources[index]) : std::string("?");
      }
      out += "] -> " + describeRef(step.dst);
      if (step.finalize) out += " final";
      return out;
    }
    case StepKind::kSignal:
      std::snprintf(buf, sizeof(buf), "signal r%d flag %d", step.peer, step.flag);
      return buf;
    case StepKind::kWait:
      std::snprintf(buf, sizeof(buf), "wait r%d flag %d >= %u", step.peer, step.flag, step.value);
      return buf;
  }
  return "invalid step";
}

std::string describeRankProgram(const RankProgram& program, int rank) {
  std::string out;
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    out += "r" + std::to_string(rank) + " #" + std::to_string(i) + " " + describeStep(program, program.steps[i]) + "\n";
  }
  return out;
}

}  // namespace peerreduce
