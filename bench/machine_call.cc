#include "machine_call.h"

#include <string>

namespace peerreduce::bench {

Status callMachineCollective(MultiMachineCommunicator& comm, Collective collective, int root, MachineStrategy strategy,
                             const void* send, void* recv, std::size_t count, DataType dtype, StreamHandle stream) {
  switch (collective) {
    case Collective::kAllReduce:
      return comm.allreduce(send, recv, count, dtype, ReduceOp::kSum, stream, strategy);
    case Collective::kReduceScatter:
      return comm.reduceScatter(send, recv, count, dtype, ReduceOp::kSum, stream, strategy);
    case Collective::kAllGather:
      return comm.allGather(send, recv, count, dtype, stream, strategy);
    case Collective::kBroadcast:
      return comm.broadcast(send, recv, count, dtype, root, stream);
  }
  return invalidArgumentError("unknown collective value " + std::to_string(static_cast<int>(collective)));
}

}  // namespace peerreduce::bench
