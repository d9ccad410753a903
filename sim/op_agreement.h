// Cross-rank agreement on what each collective operation is.
//
// Every rank's k-th submitted operation is the same collective (with the same root), so its count,
// dtype, op and plan shape must match on every rank. A rank that disagrees (a bug in the application, or ranks that
// chose different algorithms) would otherwise read peers' scratch with the wrong layout, overrun it,
// or wait forever for signals the peers' plans never send. The simulator compares each submission
// with the first rank's submission of the same sequence number and fails the operation on every rank
// with kMismatch naming both ranks and the differing field.
//
// The error is sticky, on purpose, as NCCL's asynchronous errors are: ranks that already ran ahead
// have consumed signal epochs for an operation the others refused, so on real GPUs the communicators
// are out of step and later operations could pair the wrong signals. Every later operation on those
// communicators reports the same mismatch, and the message says to recreate them.
//
// Bounded: an entry is dropped once every rank submitted its operation, and at most kMaxEntries
// sequence numbers are held (the oldest go first; a rank that far behind is not checked for them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce::sim {

struct OperationDescriptor {
  std::size_t count = 0;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  Algorithm algorithm = Algorithm::kOneShot;
  int num_chunks = 1;
  int scratch_slots = 0;
  int num_flags = 1;
  Collective collective = Collective::kAllReduce;
  int root = 0;  // broadcast
};

class OperationAgreement {
 public:
  static constexpr std::size_t kMaxEntries = 1024;

  explicit OperationAgreement(int world_size) : world_size_(world_size) {}

  // Records that `rank` submitted `descriptor` as its operation `seq`. Returns ok, or kMismatch when
  // another rank submitted something different as `seq`; once `seq` disagreed, every rank that
  // submits it later gets the same error.
  Status record(int rank, std::uint64_t seq, const OperationDescriptor& descriptor);

  std::size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    OperationDescriptor first;
    int first_rank = 0;
    int recorded = 0;
    Status failure;
  };

  const int world_size_;
  std::map<std::uint64_t, Entry> entries_;
};

// The first field in which `a` and `b` differ, as "count 10 vs 20", or "" when they agree.
std::string describeDifference(const OperationDescriptor& a, const OperationDescriptor& b);

}  // namespace peerreduce::sim
