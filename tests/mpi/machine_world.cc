#include "machine_world.h"

#include <mpi.h>

#include <thread>

namespace peerreduce::testing {

int thisMachine() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int machineCount() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

StatusOr<MachineWorld> makeMachineWorld(int local_ranks, mpi::MpiTransportOptions options, std::size_t region_bytes) {
  MachineWorld world;
  world.machine = thisMachine();
  world.machines = machineCount();
  PR_ASSIGN_OR_RETURN(world.transports, mpi::createMpiTransports(MPI_COMM_WORLD, local_ranks, options));
  // Each transport's exchange runs on its own communicator, so the local ranks connect concurrently.
  const std::vector<Status> connected = onLocalRanks(local_ranks, [&](int l) {
    return mpi::connectOverMpi(*world.transports[static_cast<std::size_t>(l)], region_bytes, std::chrono::seconds(30));
  });
  for (const Status& status : connected) PR_RETURN_IF_ERROR(status);
  return world;
}

ExecutionRequest floatAllreduceRequest(const std::shared_ptr<const Plan>& plan, const std::vector<float>& in,
                                       std::vector<float>& out, std::chrono::milliseconds timeout) {
  ExecutionRequest request;
  request.plan = plan;
  request.send = in.data();
  request.recv = out.data();
  request.count = in.size();
  request.block_stride = in.size();
  request.dtype = DataType::kFloat32;
  request.op = ReduceOp::kSum;
  request.layout = ChunkLayout::make(in.size(), plan->num_chunks, sizeof(float));
  request.timeout = timeout;
  return request;
}

std::vector<Status> onLocalRanks(int local_ranks, const std::function<Status(int)>& body) {
  std::vector<Status> results(static_cast<std::size_t>(local_ranks));
  std::vector<std::thread> threads;
  for (int l = 0; l < local_ranks; ++l) {
    threads.emplace_back([&, l] { results[static_cast<std::size_t>(l)] = body(l); });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

bool everyMachine(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

std::vector<std::vector<std::uint8_t>> gatherFromMachines(const std::vector<std::uint8_t>& mine) {
  const int machines = machineCount();
  std::vector<std::uint8_t> all(mine.size() * static_cast<std::size_t>(machines));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), static_cast<int>(mine.size()),
                MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<std::uint8_t>> out;
  for (int m = 0; m < machines; ++m) {
    const auto* begin = all.data() + static_cast<std::size_t>(m) * mine.size();
    out.emplace_back(begin, begin + mine.size());
  }
  return out;
}

}  // namespace peerreduce::testing
