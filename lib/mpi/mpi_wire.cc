#include "mpi/mpi_wire.h"

#include <string>

namespace peerreduce::mpi {

Status checkControlMessage(const ControlMessage& message, std::size_t received_bytes, int source, int world_size,
                           int max_flags, std::size_t region_bytes) {
  const std::string from = "MPI transport: control message from machine " + std::to_string(source) + ": ";
  if (received_bytes != sizeof(ControlMessage)) {
    return corruptError(from + std::to_string(received_bytes) + " bytes, expected " +
                        std::to_string(sizeof(ControlMessage)));
  }
  if (message.magic != kControlMagic) return corruptError(from + "does not start with the transport's magic");
  switch (message.kind) {
    case ControlKind::kSignal:
      if (message.flag < 0 || message.flag >= max_flags) {
        return corruptError(from + "signal of flag " + std::to_string(message.flag) + ", flags are 0.." +
                            std::to_string(max_flags - 1));
      }
      return Status::ok();
    case ControlKind::kRead:
      if (message.bytes == 0 || message.offset > region_bytes || message.bytes > region_bytes - message.offset) {
        return corruptError(from + "read of " + std::to_string(message.bytes) + " bytes at offset " +
                            std::to_string(message.offset) + " outside this rank's region of " +
                            std::to_string(region_bytes) + " bytes");
      }
      return Status::ok();
    case ControlKind::kAborted:
      return Status::ok();
    case ControlKind::kSuspect:
      if (message.peer < 0 || message.peer >= world_size || message.peer == source) {
        return corruptError(from + "suspects machine " + std::to_string(message.peer) + " of a world of " +
                            std::to_string(world_size));
      }
      return Status::ok();
  }
  return corruptError(from + "unknown kind " + std::to_string(static_cast<std::uint32_t>(message.kind)));
}

}  // namespace peerreduce::mpi
