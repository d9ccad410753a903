// The messages MpiTransport ranks exchange over their communicator (lib/mpi/mpi_transport.h).
//
// Two tags. kControlTag carries fixed-size ControlMessages, received by one posted receive from any
// source: a signal (a plan's kSignal: the receiver increments its counter of the sender's flag), a read
// request (the sender wants bytes of the receiver's scratch), and notices about failures. kReplyTag
// carries the bytes a read request asked for, received straight into the reader's fetch buffer. MPI
// does not reorder messages of one sender, tag and communicator, so a rank's signals arrive in the
// order it sent them and the replies of one owner in the order it was asked.
//
// A ControlMessage comes from another process: checkControlMessage validates every field before the
// receiver acts on it (kCorrupt naming the machine it came from).
#pragma once

#include <cstddef>
#include <cstdint>

#include "peerreduce/status.h"

namespace peerreduce::mpi {

inline constexpr int kControlTag = 17;
inline constexpr int kReplyTag = 18;
inline constexpr std::uint32_t kControlMagic = 0x50524d43;  // "PRMC"

enum class ControlKind : std::uint32_t {
  kSignal = 1,   // `flag` of the sender, held by the receiver, grows by one
  kRead = 2,     // reply with `bytes` bytes of the receiver's region from `offset`
  kAborted = 3,  // the sender's transport was aborted: it will take part in nothing more
  kSuspect = 4,  // the sender is near its deadline waiting for machine `peer`
};

struct ControlMessage {
  std::uint32_t magic = kControlMagic;
  ControlKind kind = ControlKind::kSignal;
  std::int32_t flag = 0;  // kSignal
  std::int32_t peer = 0;  // kSuspect
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// Whether `message`, `received_bytes` long, from machine `source` of a world of `world_size`, is one this
// rank may act on: the magic, a known kind, a flag below `max_flags`, a peer inside the world, a read
// inside this rank's region of `region_bytes`. kCorrupt naming `source` and the field otherwise.
Status checkControlMessage(const ControlMessage& message, std::size_t received_bytes, int source, int world_size,
                           int max_flags, std::size_t region_bytes);

}  // namespace peerreduce::mpi
