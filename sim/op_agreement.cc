#include "op_agreement.h"

namespace peerreduce::sim {
namespace {

template <typename T>
std::string differs(const char* field, const T& a, const T& b) {
  return std::string(field) + " " + std::to_string(a) + " vs " + std::to_string(b);
}

std::string differsNamed(const char* field, std::string_view a, std::string_view b) {
  return std::string(field) + " " + std::string(a) + " vs " + std::string(b);
}

}  // namespace

std::string describeDifference(const OperationDescriptor& a, const OperationDescriptor& b) {
  if (a.collective != b.collective)
    return differsNamed("collective", collectiveName(a.collective), collectiveName(b.collective));
  if (a.root != b.root) return differs("broadcast root", a.root, b.root);
  if (a.count != b.count) return differs("count", a.count, b.count);
  if (a.dtype != b.dtype) return differsNamed("dtype", dataTypeName(a.dtype), dataTypeName(b.dtype));
  if (a.op != b.op) return differsNamed("op", reduceOpName(a.op), reduceOpName(b.op));
  if (a.algorithm != b.algorithm)
    return differsNamed("algorithm", algorithmName(a.algorithm), algorithmName(b.algorithm));
  if (a.num_chunks != b.num_chunks) return differs("plan chunks", a.num_chunks, b.num_chunks);
  if (a.scratch_slots != b.scratch_slots) return differs("plan scratch slots", a.scratch_slots, b.scratch_slots);
  if (a.num_flags != b.num_flags) return differs("plan flags", a.num_flags, b.num_flags);
  return "";
}

Status OperationAgreement::record(int rank, std::uint64_t seq, const OperationDescriptor& descriptor) {
  auto found = entries_.find(seq);
  if (found == entries_.end()) {
    if (entries_.size() == kMaxEntries) entries_.erase(entries_.begin());
    found = entries_.emplace(seq, Entry{descriptor, rank, 0, Status::ok()}).first;
  }
  Entry& entry = found->second;
  entry.recorded += 1;
  if (entry.failure.isOk()) {
    const std::string difference = describeDifference(entry.first, descriptor);
    if (!difference.empty()) {
      entry.failure =
          mismatchError("operation " + std::to_string(seq) + " differs between rank " +
                        std::to_string(entry.first_rank) + " and rank " + std::to_string(rank) + ": " + difference +
                        "; every rank must call the same collective with the same arguments. The communicators are "
                        "out of step now (as after an NCCL asynchronous error): destroy them and create "
                        "new ones");
    }
  }
  Status result = entry.failure;
  if (entry.recorded >= world_size_) entries_.erase(found);
  return result;
}

}  // namespace peerreduce::sim
