// What peerreduce-bench needs to know about each collective, kept apart from the GPU code so that it is
// unit-tested on machines without one (tests/bench/collective_units_test.cc, which also runs every
// collective on the simulator against these facts):
// - the size column as nccl-tests gives it, and the API count for a size;
// - the bus bandwidth factor (nccl-tests' busbw = algbw x factor);
// - the buffers of a call, in place (NCCL's aliasing) and out of place;
// - the input every rank writes and the result every rank must read back.
// Values are small integers, so every sum over up to 64 ranks is exact in fp32 and bf16, and the check
// is exact equality. The 8-bit floats hold too few integers for that (e5m2 every one only up to 8) and round
// every step, so their element i is nonzero on one rank alone (i mod ranks): every partial sum is that
// value or zero, exact in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce::bench {

// nccl-tests' size column for a call of `count` (the API's count: allreduce's and broadcast's count,
// reduce-scatter's recvcount, all-gather's sendcount): allreduce and broadcast count x element size,
// reduce-scatter the send buffer and all-gather the receive buffer (count x ranks x element size).
std::size_t reportedBytes(Collective collective, std::size_t count, int ranks, std::size_t elem);
// The API count whose reported size is the largest not above `bytes` (0: the size is too small for
// one element per rank).
std::size_t countForBytes(Collective collective, std::size_t bytes, int ranks, std::size_t elem);
// busbw / algbw as nccl-tests defines it: allreduce 2(n-1)/n, reduce-scatter and all-gather (n-1)/n,
// broadcast 1.
double busBandwidthFactor(Collective collective, int ranks);

// Where a call's buffers lie in the two allocations the benchmark holds (the send allocation and the
// receive allocation, each at least the largest reported size), as byte offsets. In place follows
// NCCL: allreduce and broadcast pass one buffer; reduce-scatter receives into the rank's block of its
// send buffer; all-gather sends from the rank's block of its receive buffer.
enum class Allocation { kSend, kRecv };
struct Placement {
  Allocation send_in = Allocation::kSend;
  std::size_t send_offset = 0;
  std::size_t send_elems = 0;  // elements the call reads from its send buffer
  Allocation recv_in = Allocation::kRecv;
  std::size_t recv_offset = 0;
  std::size_t recv_elems = 0;  // elements the call writes into its receive buffer
};
Placement placementOf(Collective collective, bool in_place, int rank, int ranks, std::size_t count, std::size_t elem);

// Whether the rank's send buffer is read at all (a broadcast reads only the root's): the benchmark
// uploads an input only where it is, so a buffer nobody writes still holds its poison.
bool readsInput(Collective collective, int rank, int root);

// The value of element `i` of rank `rank`'s send buffer of `dtype` in a world of `ranks`: an integer in
// [-4, 4] (zero on every rank but one for the 8-bit floats).
float inputValue(DataType dtype, int rank, int ranks, std::size_t i);
// The value element `j` of rank `rank`'s receive buffer must hold after the call (sum for the reductions).
float expectedValue(DataType dtype, Collective collective, int rank, int ranks, int root, std::size_t count,
                    std::size_t j);

// The benchmark's types: fp32, fp16, bf16, fp8e4m3 and fp8e5m2.
bool benchmarkedType(DataType dtype);
// `elems` input values of `rank` (of `ranks`) encoded as `dtype` (a benchmarked type).
std::vector<unsigned char> encodeInput(DataType dtype, int rank, int ranks, std::size_t elems);
// How many of the `recv_elems` elements of `received` (encoded as `dtype`) differ from expectedValue.
long long countWrong(const std::vector<unsigned char>& received, DataType dtype, Collective collective, int rank,
                     int ranks, int root, std::size_t count);

}  // namespace peerreduce::bench
