// TestWorld: where a test's ranks live. The same test code runs on in-process simulated ranks (the
// default, no GPU) and, under mpirun, on one process per GPU with the real transport.
//
// A test is written from the point of view of the local ranks: it enqueues work on comm(r) for every r
// in localRanks(), calls completeAll(), checks its local results, and makes every verdict collective
// with allRanksAgree() before asserting, so every rank takes the same path (and RapidCheck shrinks the
// same way on every rank). Buffers come from allocate(): host memory on the simulator, device memory
// on GPUs, with explicit upload/download.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"

namespace peerreduce::testing {

class TestBuffer {
 public:
  virtual ~TestBuffer() = default;
  virtual void* data() = 0;  // the pointer to hand to allreduce
  virtual std::size_t bytes() const = 0;
  virtual void upload(const void* host, std::size_t offset, std::size_t bytes) = 0;
  virtual void download(void* host, std::size_t offset, std::size_t bytes) const = 0;
};

class TestWorld {
 public:
  virtual ~TestWorld() = default;
  virtual int size() const = 0;
  virtual const std::vector<int>& localRanks() const = 0;
  virtual Communicator& comm(int rank) = 0;
  // The stream a local rank's operations go on: the default (null) everywhere but where ranks share one
  // GPU in one process, which need a stream each (on one stream their kernels would run one after the
  // other, and each would wait for the next).
  virtual StreamHandle stream(int /*rank*/) { return nullptr; }
  // Completes everything the local ranks enqueued; the first error.
  virtual Status completeAll() = 0;
  // Collective AND of `local` over every rank of the world.
  virtual bool allRanksAgree(bool local) = 0;
  // Collective: true when `value` is the same on every rank (used to compare result hashes).
  virtual bool allRanksEqual(std::uint64_t value) = 0;
  virtual std::unique_ptr<TestBuffer> allocate(std::size_t bytes) = 0;
  // The simulated world behind this one, or null on hardware.
  virtual sim::SimWorld* simWorld() { return nullptr; }
};

// In-process world of `size` simulated ranks; every rank's communicator created with `config`.
StatusOr<std::unique_ptr<TestWorld>> makeSimTestWorld(int size, const sim::SimOptions& options, const Config& config);

}  // namespace peerreduce::testing
