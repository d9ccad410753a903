// Helpers for the simulator's own tests: a world whose transports are opened and connected by hand
// (so a test can submit any plan, also a broken one, straight to the engine), and per-rank buffers.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/simulator.h"
#include "text_contains.h"

namespace peerreduce::testing {

// A SimWorld with every rank's symmetric memory opened (`scratch_bytes` each) and connected.
struct ConnectedWorld {
  std::shared_ptr<sim::SimWorld> world;
  std::vector<std::vector<std::byte>> records;
  std::vector<std::vector<float>> send;
  std::vector<std::vector<float>> recv;

  Transport& transport(int rank) const { return *world->transport(rank); }

  // A request for rank `rank` running `plan` over `count` fp32 elements of its own buffers.
  ExecutionRequest request(int rank, const std::shared_ptr<const Plan>& plan, std::size_t count,
                           ReduceOp op = ReduceOp::kSum) {
    ExecutionRequest r;
    r.plan = plan;
    r.send = send[static_cast<std::size_t>(rank)].data();
    r.recv = plan->in_place ? static_cast<void*>(send[static_cast<std::size_t>(rank)].data())
                            : recv[static_cast<std::size_t>(rank)].data();
    r.count = count;
    r.dtype = DataType::kFloat32;
    r.op = op;
    r.layout = ChunkLayout::make(count, plan->num_chunks, sizeof(float));
    return r;
  }
};

// Rank r's input is r + 1 everywhere, so a sum over n ranks is n(n+1)/2 in every element.
inline ConnectedWorld makeConnectedWorld(int n, sim::SimOptions options = {}, std::size_t scratch_bytes = 1 << 16,
                                         std::size_t elements = 1024) {
  ConnectedWorld c;
  auto world = sim::SimWorld::create(n, std::move(options));
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  if (!world.isOk()) return c;
  c.world = *world;
  for (int r = 0; r < n; ++r) {
    auto record = c.world->transport(r)->openSymmetric(scratch_bytes);
    EXPECT_TRUE(record.isOk()) << record.status().toString();
    if (record.isOk()) c.records.push_back(record->record);
  }
  for (int r = 0; r < n; ++r) {
    const Status s = c.world->transport(r)->connectPeers(c.records);
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  for (int r = 0; r < n; ++r) {
    c.send.emplace_back(elements, static_cast<float>(r + 1));
    c.recv.emplace_back(elements, -1.0f);
  }
  return c;
}

}  // namespace peerreduce::testing
