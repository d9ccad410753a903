// The reference results of reduce-scatter, all-gather and broadcast, from the inputs alone (see
// reference.h for why nothing here shares code with lib/ or kernels/).
#include <cstring>

#include "reference.h"

namespace peerreduce::testing {

ReferenceResult referenceReduceScatter(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs,
                                       std::size_t count, int rank) {
  const std::size_t block_bytes = count * referenceElementSize(dtype);
  std::vector<const void*> blocks;
  for (const void* input : inputs) {
    blocks.push_back(static_cast<const unsigned char*>(input) + block_bytes * static_cast<std::size_t>(rank));
  }
  return referenceReduce(dtype, op, blocks, count);
}

std::vector<std::uint8_t> referenceAllGather(DataType dtype, const std::vector<const void*>& inputs,
                                             std::size_t count) {
  const std::size_t block_bytes = count * referenceElementSize(dtype);
  std::vector<std::uint8_t> out(block_bytes * inputs.size());
  for (std::size_t r = 0; r < inputs.size() && block_bytes > 0; ++r) {
    std::memcpy(out.data() + r * block_bytes, inputs[r], block_bytes);
  }
  return out;
}

std::vector<std::uint8_t> referenceBroadcast(DataType dtype, const std::vector<const void*>& inputs, std::size_t count,
                                             int root) {
  const std::size_t bytes = count * referenceElementSize(dtype);
  const auto* source = static_cast<const std::uint8_t*>(inputs.at(static_cast<std::size_t>(root)));
  return std::vector<std::uint8_t>(source, source + bytes);
}

std::string compareExactly(DataType dtype, const std::vector<std::uint8_t>& expected, const void* actual) {
  const std::size_t elem = referenceElementSize(dtype);
  const auto* got = static_cast<const std::uint8_t*>(actual);
  std::size_t bad = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < expected.size() / elem; ++i) {
    if (std::memcmp(got + i * elem, expected.data() + i * elem, elem) == 0) continue;
    if (bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return "element " + std::to_string(first) + " differs from its source's bits (" + std::to_string(bad) +
         " elements differ)";
}

}  // namespace peerreduce::testing
