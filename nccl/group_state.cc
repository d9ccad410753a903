#include "nccl/group_state.h"

namespace peerreduce::nccl {

GroupState& threadGroup() {
  thread_local GroupState group;
  return group;
}

}  // namespace peerreduce::nccl
