// Where the pushing kernels' pieces go when an operation streams through the scratch (kernels/push_kernels.cuh),
// and when a place may be written again. Host and device, so the geometry and the reuse rule are tested on
// CPUs (tests/kernels/piece_ring_test.cc: every piece inside its block's region, regions apart, and a model of
// both ranks' loops under every interleaving a random scheduler finds, never overwriting a piece the peer has
// not taken and never stuck).
//
// Streamed (LaunchArgs::ring_bytes set), each of the launch's blocks owns a region of the ring: `places` places
// of `per_piece` elements. Piece k of the block's slice goes to place k mod places. The sender writes piece k
// only once the peer is done with piece k - places, which sat there: a peer that also sends (allreduce,
// reduce-scatter, all-gather) signals piece m + 1 only after it folded or copied piece m (the same loop
// iteration), so its signal for piece k - places + 1 says so; a broadcast's receiver acknowledges each piece
// it took. Signals from one peer block count on one counter: `entered` is number 1, then the peer's per-piece
// signals are 2, 3, ... in order.
//
// At more than two ranks (reduce-scatter and all-gather) every rank sends to every other, so a receiver's ring
// is cut into one part per sender (senderPartBytes, senderPart), each cut into the blocks' regions as above; a
// sender's reuse rule is the same per receiver, since a receiver signals piece m + 1 only after it took piece m
// from every sender. At two ranks the one part is the whole ring.
#pragma once

#include <cstdint>

#include "portability.h"

namespace peerreduce::gpu {

struct PieceRing {
  std::uint64_t per_piece = 0;  // elements of every piece but the last
  std::uint64_t pieces = 0;     // of this block's slice
  std::uint64_t places = 0;     // 0: each piece at its own offset (the operation fits the scratch)
  std::uint64_t region = 0;     // streamed: the block's first element in the ring
};

// Block `block` of `blocks` streaming `n` elements (its slice) of `elem_bytes` each through `ring_bytes`,
// in pieces of `piece_bytes` (0: half the block's region). Whole 16-byte vectors: a block's region is its
// even share of the ring's vectors, a piece at most half of it (so at least two places where the region
// holds two pieces, the host's condition for streaming: gpu/kernel_choice.h, streamsPieces) and at least one
// vector.
PR_HOST_DEVICE PR_INLINE PieceRing streamedPieceRing(std::uint64_t n, std::uint64_t elem_bytes,
                                                     std::uint64_t ring_bytes, std::uint64_t piece_bytes,
                                                     std::uint64_t blocks, std::uint64_t block) {
  constexpr std::uint64_t kVector = 16;
  const std::uint64_t per_vector = kVector / elem_bytes;
  const std::uint64_t region_vectors = ring_bytes / kVector / blocks;
  const std::uint64_t half = region_vectors / 2 > 0 ? region_vectors / 2 : 1;
  const std::uint64_t asked = piece_bytes / kVector;
  std::uint64_t piece_vectors = asked == 0 || asked > half ? half : asked;
  if (piece_vectors == 0) piece_vectors = 1;
  PieceRing r;
  r.per_piece = piece_vectors * per_vector;
  r.places = region_vectors / piece_vectors > 0 ? region_vectors / piece_vectors : 1;
  r.region = block * region_vectors * per_vector;
  r.pieces = n > 0 ? (n + r.per_piece - 1) / r.per_piece : 1;
  return r;
}

// Bytes of one sender's part of a receiver's `ring_bytes` in a world of `world_size` ranks: the ring cut into
// world_size - 1 parts of whole 16-byte vectors (the whole ring at two ranks).
PR_HOST_DEVICE PR_INLINE std::uint64_t senderPartBytes(std::uint64_t ring_bytes, int world_size) {
  const std::uint64_t senders = world_size > 2 ? static_cast<std::uint64_t>(world_size - 1) : 1;
  return ring_bytes / 16 / senders * 16;
}

// Which part of `receiver`'s ring `sender` writes: its place among the receiver's peers in rank order.
PR_HOST_DEVICE PR_INLINE int senderPart(int sender, int receiver) { return sender < receiver ? sender : sender - 1; }

// A broadcast past two ranks relays (kernels/push_kernels.cuh, pushBroadcastRelayKernel): the root pushes every
// receiver one range of the buffer and each receiver passes its range on to the others, so the root's links
// carry the buffer once instead of once per receiver. The ranges of `count` elements: world_size - 1 of one
// capacity in whole vectors (the last may be shorter, or empty).
PR_HOST_DEVICE PR_INLINE std::uint64_t relayRangeElements(std::uint64_t count, std::uint64_t elem_bytes,
                                                          int world_size) {
  const std::uint64_t per_vector = 16 / elem_bytes;
  const std::uint64_t vectors = (count + per_vector - 1) / per_vector;
  const std::uint64_t ranges = world_size > 2 ? static_cast<std::uint64_t>(world_size - 1) : 1;
  return (vectors + ranges - 1) / ranges * per_vector;
}

// Each of `blocks` blocks' share of a range of `range` elements, in whole vectors: every block's ring is cut
// from this capacity, so every range, block and rank has the same pieces (empty past the range's end).
PR_HOST_DEVICE PR_INLINE std::uint64_t relayBlockElements(std::uint64_t range, std::uint64_t elem_bytes,
                                                          std::uint64_t blocks) {
  const std::uint64_t per_vector = 16 / elem_bytes;
  const std::uint64_t vectors = (range + per_vector - 1) / per_vector;
  return blocks > 0 ? (vectors + blocks - 1) / blocks * per_vector : 0;
}

// The element of slot 0 where piece `k` lives: its own offset `own_offset` (its first element in the slice)
// when the operation fits, else its place in the block's region.
PR_HOST_DEVICE PR_INLINE std::uint64_t placeOfPiece(const PieceRing& r, std::uint64_t own_offset, std::uint64_t k) {
  return r.places == 0 ? own_offset : r.region + (k % r.places) * r.per_piece;
}

// The peer's signal number (its `entered` is 1) the sender waits for before writing piece `k`, or 0 when the
// place is fresh in this operation (no wait). `peer_acknowledges`: the peer is a broadcast's receiver, whose
// per-piece signals are acknowledgements (piece m's is 2 + m); otherwise the peer's signal for piece m is
// 2 + m and follows its use of piece m - 1, so piece m's place is free after signal 3 + m.
PR_HOST_DEVICE PR_INLINE std::uint64_t placeFreeSignal(const PieceRing& r, std::uint64_t k, bool peer_acknowledges) {
  if (r.places == 0 || k < r.places) return 0;
  const std::uint64_t last = k - r.places;  // the piece that sat in this place
  return (peer_acknowledges ? 2 : 3) + last;
}

}  // namespace peerreduce::gpu
