// The MPI half of the C API (peerreduce/peerreduce_mpi.h): prBootstrapFromMpi. Built into peerreduce_mpi,
// so only applications that use MPI depend on it.
#include <memory>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "peerreduce/mpi_bootstrap.h"
#include "peerreduce/peerreduce_mpi.h"

extern "C" {

prResult_t prBootstrapFromMpi(MPI_Comm comm, prBootstrap_t* bootstrap) noexcept {
  constexpr const char* kFunction = "prBootstrapFromMpi";
  return peerreduce::capi::guarded(kFunction, [&]() -> prResult_t {
    if (bootstrap == nullptr) {
      return peerreduce::capi::nullArgument(kFunction, "bootstrap", "pass the address of a prBootstrap_t");
    }
    *bootstrap = nullptr;
    auto created = peerreduce::createMpiBootstrap(comm);
    if (!created.isOk()) return peerreduce::capi::toResult(kFunction, created.status());
    auto handle = std::make_unique<prBootstrap>();
    handle->bootstrap = std::move(created).value();
    handle->describe = "MPI";
    *bootstrap = peerreduce::capi::publishBootstrap(std::move(handle));
    return prSuccess;
  });
}

}  // extern "C"
