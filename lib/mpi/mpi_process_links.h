// The MPI factory of the seam of peerreduce/multi_machine.h for the usual mpirun launch: one process per
// rank (its rank in `world` is its world rank), the machines found from host identities.
//
// For each rank it splits `world` twice: by machine (the machine world, ranks ordered by local rank) and
// by local rank (the network world, ranks ordered by machine). The network world gets an MpiTransport
// and an MPI bootstrap; the machine world an MPI bootstrap and the transport the caller makes for it (a
// GPU transport on GPUs; tests use an MpiTransport over the machine's communicator), given the machine's
// communicator (valid during the call: duplicate it to keep it).
//
// Every MPI call that involves other ranks comes before the caller's maker, so a rank whose maker fails
// has already taken part in every split and duplication (MPI's communicator creation cannot be bounded
// by a deadline); its failure then reaches the others through creation's agreement.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

#include "mpi/mpi_transport.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/multi_machine.h"

namespace peerreduce::mpi {

using MachineTransportMaker = std::function<StatusOr<std::shared_ptr<Transport>>(
    const MachineLayout& layout, MPI_Comm machine, const std::shared_ptr<Bootstrap>& machine_bootstrap)>;

// kInvalidArgument (from the factory) when the layout's rank or world size is not this process's in
// `world`; kUnsupported when MPI's thread level is below MPI_THREAD_SERIALIZED.
MachineLinksFactory mpiProcessLinksFactory(MPI_Comm world, MachineTransportMaker machine_transport,
                                           MpiTransportOptions options = {});

}  // namespace peerreduce::mpi
