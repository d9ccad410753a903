// The simulator's multi-machine world: see peerreduce/multi_machine_sim.h.
#include "peerreduce/multi_machine_sim.h"

#include <algorithm>

#include "peerreduce/types.h"
#include "topology/machines.h"
#include "util/hash.h"

namespace peerreduce::sim {

namespace {

Status checkOptions(const MultiMachineSimOptions& o) {
  auto inRange = [](int v) { return v >= 1 && v <= kMaxWorldSize; };
  if (!inRange(o.machines)) {
    return invalidArgumentError("simulated machines: " + std::to_string(o.machines) + "; 1.." +
                                std::to_string(kMaxWorldSize) + " are supported");
  }
  if (!inRange(o.ranks_per_machine)) {
    return invalidArgumentError("simulated ranks per machine: " + std::to_string(o.ranks_per_machine) + "; 1.." +
                                std::to_string(kMaxWorldSize) + " are supported");
  }
  if (o.machines * o.ranks_per_machine > kMaxWorldSize) {
    return invalidArgumentError("simulated world of " + std::to_string(o.machines) + " machines x " +
                                std::to_string(o.ranks_per_machine) +
                                " ranks = " + std::to_string(o.machines * o.ranks_per_machine) + " ranks; at most " +
                                std::to_string(kMaxWorldSize) + " run in one process");
  }
  if (o.machine_topology.worldSize() != 0 && o.machine_topology.worldSize() != o.ranks_per_machine) {
    return invalidArgumentError("machine topology of " + std::to_string(o.machine_topology.worldSize()) +
                                " ranks for machines of " + std::to_string(o.ranks_per_machine));
  }
  if (o.network.link_class != LinkClass::kNetwork || !(o.network.bandwidth_gbps > 0.0) ||
      !(o.network.latency_us >= 0.0)) {
    return invalidArgumentError("network link must be of class network with a positive bandwidth (got " +
                                std::string(linkClassName(o.network.link_class)) + ", " +
                                std::to_string(o.network.bandwidth_gbps) + " GB/s)");
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::shared_ptr<MultiMachineSimWorld>> MultiMachineSimWorld::create(const MultiMachineSimOptions& options) {
  PR_RETURN_IF_ERROR(checkOptions(options));
  std::shared_ptr<MultiMachineSimWorld> world(new MultiMachineSimWorld());
  world->options_ = options;
  for (int m = 0; m < options.machines; ++m) {
    SimOptions o;
    o.seed = options.seed + static_cast<std::uint64_t>(m);  // each world its own interleaving
    o.topology = options.machine_topology;
    o.race_checking = options.race_checking;
    o.wait_timeout_us = options.wait_timeout_us;
    PR_ASSIGN_OR_RETURN(auto machine, SimWorld::create(options.ranks_per_machine, o));
    world->machine_worlds_.push_back(std::move(machine));
  }
  for (int i = 0; i < options.ranks_per_machine; ++i) {
    SimOptions o;
    o.seed = options.seed + 1000003ull * static_cast<std::uint64_t>(i + 1);
    o.topology = networkTopology(options.machines, options.network);
    o.race_checking = options.race_checking;
    o.wait_timeout_us = options.wait_timeout_us;
    PR_ASSIGN_OR_RETURN(auto network, SimWorld::create(options.machines, o));
    world->network_worlds_.push_back(std::move(network));
  }
  PR_ASSIGN_OR_RETURN(world->world_bootstraps_, createInProcessGroup(world->worldSize()));
  return world;
}

int MultiMachineSimWorld::worldSize() const { return options_.machines * options_.ranks_per_machine; }

int MultiMachineSimWorld::machineOf(int rank) const {
  return options_.interleaved ? rank % options_.machines : rank / options_.ranks_per_machine;
}

std::string MultiMachineSimWorld::hostIdentity(int rank) const { return "machine-" + std::to_string(machineOf(rank)); }

std::shared_ptr<Bootstrap> MultiMachineSimWorld::worldBootstrap(int rank) const {
  return world_bootstraps_.at(static_cast<std::size_t>(rank));
}

MachineLinksFactory MultiMachineSimWorld::linksFactory() const {
  // Holds the worlds, not this object, so a factory outlives nothing it needs.
  const auto machines = machine_worlds_;
  const auto networks = network_worlds_;
  const int k = options_.ranks_per_machine;
  return [machines, networks, k](const MachineLayout& layout) -> StatusOr<MachineLinks> {
    const std::string& name = layout.machine_names[static_cast<std::size_t>(layout.machine)];
    int simulated = -1;  // which simulated machine the layout's machine is: "machine-<m>"
    for (int m = 0; m < static_cast<int>(machines.size()) && simulated < 0; ++m) {
      if (name == "machine-" + std::to_string(m)) simulated = m;
    }
    if (simulated < 0 || layout.machines != static_cast<int>(machines.size()) || layout.ranks_per_machine != k ||
        simulated != layout.machine) {
      return invalidArgumentError("rank " + std::to_string(layout.rank) + " is on machine '" + name + "' (index " +
                                  std::to_string(layout.machine) + " of " + std::to_string(layout.machines) +
                                  "), which this simulated world of " + std::to_string(machines.size()) +
                                  " machines x " + std::to_string(k) + " ranks does not have there");
    }
    MachineLinks links;
    const auto& machine = machines[static_cast<std::size_t>(simulated)];
    const auto& network = networks[static_cast<std::size_t>(layout.local_rank)];
    links.machine_bootstrap = machine->bootstrap(layout.local_rank);
    links.machine_transport = machine->transport(layout.local_rank);
    links.network_bootstrap = network->bootstrap(layout.machine);
    links.network_transport = network->transport(layout.machine);
    return links;
  };
}

SimWorld& MultiMachineSimWorld::machineWorld(int machine) const {
  return *machine_worlds_.at(static_cast<std::size_t>(machine));
}
SimWorld& MultiMachineSimWorld::networkWorld(int local_rank) const {
  return *network_worlds_.at(static_cast<std::size_t>(local_rank));
}

double MultiMachineSimWorld::virtualTimeUs() const {
  double slowest_machine = 0.0;
  double slowest_network = 0.0;
  for (const auto& w : machine_worlds_) slowest_machine = std::max(slowest_machine, w->stats().virtual_time_us);
  for (const auto& w : network_worlds_) slowest_network = std::max(slowest_network, w->stats().virtual_time_us);
  return slowest_machine + slowest_network;
}

std::vector<std::string> MultiMachineSimWorld::raceReports() const {
  std::vector<std::string> all;
  for (std::size_t m = 0; m < machine_worlds_.size(); ++m) {
    for (const auto& r : machine_worlds_[m]->raceReports()) all.push_back("machine " + std::to_string(m) + ": " + r);
  }
  for (std::size_t i = 0; i < network_worlds_.size(); ++i) {
    for (const auto& r : network_worlds_[i]->raceReports()) {
      all.push_back("network of local rank " + std::to_string(i) + ": " + r);
    }
  }
  return all;
}

std::uint64_t MultiMachineSimWorld::traceFingerprint() const {
  Fnv1a hash;
  for (const auto& w : machine_worlds_) hash.add(w->traceFingerprint());
  for (const auto& w : network_worlds_) hash.add(w->traceFingerprint());
  return hash.value();
}

}  // namespace peerreduce::sim
