// The C API of communicators that span machines (peerreduce/peerreduce.h, "Communicators that span
// machines"): the calls on a prMultiComm_t. Creation lives where the worlds do (the simulator's in
// sim/c_api_multi_machine_sim.cc).
#include <string>

#include "api/c_api_internal.h"
#include "api/c_multi_comm_handle.h"

namespace peerreduce::capi {

HandleRegistry& liveMultiComms() {
  static HandleRegistry registry;
  return registry;
}

namespace {

prResult_t checkMultiComm(const char* function, prMultiComm_t comm) noexcept {
  if (comm == nullptr) return nullArgument(function, "comm", kMultiCommHint);
  if (!liveMultiComms().contains(comm)) return unknownHandle(function, "comm", kMultiCommHint);
  return prSuccess;
}

// The strategy, or an error naming the value (the communicator's calls would refuse it too; here the
// message names the C enum).
StatusOr<MachineStrategy> strategyOf(prMachineStrategy_t strategy) {
  const int value = static_cast<int>(strategy);
  if (value < 0 || value >= prNumStrategies) {
    return invalidArgumentError("unknown strategy value " + std::to_string(value) +
                                " (valid: prStrategyAuto, prStrategyHierarchical, prStrategyFlat)");
  }
  return static_cast<MachineStrategy>(value);
}

DataType dataTypeOf(prDataType_t datatype) { return static_cast<DataType>(static_cast<int>(datatype)); }
ReduceOp reduceOpOf(prRedOp_t op) { return static_cast<ReduceOp>(static_cast<int>(op)); }

// Runs `call` on a live communicator with a valid strategy, inside the exception barrier.
template <typename Call>
prResult_t onMultiComm(const char* function, prMultiComm_t comm, prMachineStrategy_t strategy, Call&& call) noexcept {
  return guarded(function, [&]() -> prResult_t {
    const prResult_t checked = checkMultiComm(function, comm);
    if (checked != prSuccess) return checked;
    auto machine_strategy = strategyOf(strategy);
    if (!machine_strategy.isOk()) return toResult(function, machine_strategy.status());
    return toResult(function, call(*comm->comm, *machine_strategy));
  });
}

}  // namespace
}  // namespace peerreduce::capi

using peerreduce::MachineStrategy;
using peerreduce::MultiMachineCommunicator;
using peerreduce::capi::dataTypeOf;
using peerreduce::capi::onMultiComm;
using peerreduce::capi::reduceOpOf;

extern "C" {

prResult_t prMultiAllReduce(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, prRedOp_t op,
                            prMachineStrategy_t strategy, prMultiComm_t comm, void* stream) noexcept {
  return onMultiComm("prMultiAllReduce", comm, strategy, [&](MultiMachineCommunicator& c, MachineStrategy s) {
    return c.allreduce(sendbuff, recvbuff, count, dataTypeOf(datatype), reduceOpOf(op), stream, s);
  });
}

prResult_t prMultiReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, prDataType_t datatype,
                                prRedOp_t op, prMachineStrategy_t strategy, prMultiComm_t comm, void* stream) noexcept {
  return onMultiComm("prMultiReduceScatter", comm, strategy, [&](MultiMachineCommunicator& c, MachineStrategy s) {
    return c.reduceScatter(sendbuff, recvbuff, recvcount, dataTypeOf(datatype), reduceOpOf(op), stream, s);
  });
}

prResult_t prMultiAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, prDataType_t datatype,
                            prMachineStrategy_t strategy, prMultiComm_t comm, void* stream) noexcept {
  return onMultiComm("prMultiAllGather", comm, strategy, [&](MultiMachineCommunicator& c, MachineStrategy s) {
    return c.allGather(sendbuff, recvbuff, sendcount, dataTypeOf(datatype), stream, s);
  });
}

prResult_t prMultiBroadcast(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, int root,
                            prMultiComm_t comm, void* stream) noexcept {
  return onMultiComm("prMultiBroadcast", comm, prStrategyAuto, [&](MultiMachineCommunicator& c, MachineStrategy) {
    return c.broadcast(sendbuff, recvbuff, count, dataTypeOf(datatype), root, stream);
  });
}

prResult_t prMultiCommSynchronize(prMultiComm_t comm, void* stream) noexcept {
  return onMultiComm("prMultiCommSynchronize", comm, prStrategyAuto,
                     [&](MultiMachineCommunicator& c, MachineStrategy) { return c.synchronize(stream); });
}

prResult_t prMultiCommAbort(prMultiComm_t comm) noexcept {
  return onMultiComm("prMultiCommAbort", comm, prStrategyAuto, [&](MultiMachineCommunicator& c, MachineStrategy) {
    c.abort();
    return peerreduce::Status::ok();
  });
}

prResult_t prMultiCommDestroy(prMultiComm_t comm) noexcept {
  constexpr const char* kFunction = "prMultiCommDestroy";
  return peerreduce::capi::guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return peerreduce::capi::nullArgument(kFunction, "comm", peerreduce::capi::kMultiCommHint);
    if (!peerreduce::capi::liveMultiComms().remove(comm)) {
      return peerreduce::capi::unknownHandle(kFunction, "comm", peerreduce::capi::kMultiCommHint);
    }
    delete comm;
    return prSuccess;
  });
}

prResult_t prMultiCommLayout(prMultiComm_t comm, prMachineLayout_t* layout) noexcept {
  constexpr const char* kFunction = "prMultiCommLayout";
  if (layout == nullptr) {
    return peerreduce::capi::nullArgument(kFunction, "layout", "pass the address of a prMachineLayout_t to fill");
  }
  return onMultiComm(kFunction, comm, prStrategyAuto, [&](MultiMachineCommunicator& c, MachineStrategy) {
    const peerreduce::MachineLayout& l = c.layout();
    *layout = prMachineLayout_t{l.rank, l.world_size, l.machines, l.ranks_per_machine, l.machine, l.local_rank};
    return peerreduce::Status::ok();
  });
}

}  // extern "C"
