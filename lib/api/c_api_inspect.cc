// The C API's inspection calls: what the selector chooses and why, pinned host memory, and buffer
// registration.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "api/c_api_internal.h"

struct prRegisteredBuffer {
  peerreduce::RegisteredBuffer buffer;
};

namespace peerreduce::capi {
namespace {

constexpr const char* kBufferHint = "pass a buffer registered by prCommRegisterBuffer and not deregistered since";

HandleRegistry& liveBuffers() {
  static HandleRegistry registry;
  return registry;
}

// Copies `text` into a fixed C field, cut to fit and always terminated.
template <std::size_t N>
void copyText(const std::string& text, char (&field)[N]) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

// A selection report as the C struct: the candidates past PR_MAX_CANDIDATES are left out.
prSelection_t toSelection(const SelectionReport& report) {
  prSelection_t out{};
  out.chosen = static_cast<int>(report.chosen);
  out.forced = report.forced ? 1 : 0;
  out.tuned = report.tuned ? 1 : 0;
  copyText(report.plan, out.plan);
  const std::size_t shown = std::min<std::size_t>(report.candidates.size(), PR_MAX_CANDIDATES);
  out.ncandidates = static_cast<int>(shown);
  for (std::size_t i = 0; i < shown; ++i) {
    const AlgorithmEstimate& estimate = report.candidates[i];
    out.candidates[i].algorithm = static_cast<int>(estimate.algorithm);
    out.candidates[i].predicted_us = estimate.predicted_us;
    out.candidates[i].segments = estimate.segments;
    copyText(estimate.plan, out.candidates[i].plan);
  }
  return out;
}

}  // namespace
}  // namespace peerreduce::capi

using peerreduce::capi::guarded;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;
using peerreduce::capi::unknownHandle;

extern "C" {

prResult_t prCommExplainSelection(prComm_t comm, size_t count, prDataType_t datatype,
                                  prSelection_t* selection) noexcept {
  constexpr const char* kFunction = "prCommExplainSelection";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (selection == nullptr) return nullArgument(kFunction, "selection", "pass the address of a prSelection_t");
    auto report = comm->comm->explainSelection(count, static_cast<peerreduce::DataType>(static_cast<int>(datatype)));
    if (!report.isOk()) return toResult(kFunction, report.status());
    *selection = peerreduce::capi::toSelection(*report);
    return prSuccess;
  });
}

prResult_t prCommExplainCollective(prComm_t comm, prCollective_t collective, size_t count, prDataType_t datatype,
                                   int root, prSelection_t* selection) noexcept {
  constexpr const char* kFunction = "prCommExplainCollective";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (selection == nullptr) return nullArgument(kFunction, "selection", "pass the address of a prSelection_t");
    auto report = comm->comm->explainSelection(static_cast<peerreduce::Collective>(static_cast<int>(collective)), count,
                                               static_cast<peerreduce::DataType>(static_cast<int>(datatype)), root);
    if (!report.isOk()) return toResult(kFunction, report.status());
    *selection = peerreduce::capi::toSelection(*report);
    return prSuccess;
  });
}

prResult_t prCommPinnedStats(prComm_t comm, prPinnedStats_t* stats) noexcept {
  constexpr const char* kFunction = "prCommPinnedStats";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (stats == nullptr) return nullArgument(kFunction, "stats", "pass the address of a prPinnedStats_t");
    const peerreduce::PinnedStats s = comm->comm->pinnedStats();
    *stats =
        prPinnedStats_t{s.limit_bytes,   s.bytes_pinned,  s.peak_bytes_pinned, s.bytes_in_use, s.bytes_idle,
                        s.blocks_in_use, s.blocks_idle,   s.acquisitions,      s.reuses,       s.system_allocations,
                        s.evictions,     s.bytes_evicted, s.failures,          s.bytes_staged};
    return prSuccess;
  });
}

prResult_t prCommRegisterBuffer(prComm_t comm, const void* ptr, size_t bytes, prRegisteredBuffer_t* buffer) noexcept {
  constexpr const char* kFunction = "prCommRegisterBuffer";
  return guarded(kFunction, [&]() -> prResult_t {
    if (buffer == nullptr) return nullArgument(kFunction, "buffer", "pass the address of a prRegisteredBuffer_t");
    *buffer = nullptr;
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    auto registered = comm->comm->registerBuffer(ptr, bytes);
    if (!registered.isOk()) return toResult(kFunction, registered.status());
    auto handle = std::make_unique<prRegisteredBuffer>(prRegisteredBuffer{std::move(registered).value()});
    peerreduce::capi::liveBuffers().add(handle.get());
    *buffer = handle.release();
    return prSuccess;
  });
}

prResult_t prCommDeregisterBuffer(prComm_t comm, prRegisteredBuffer_t buffer) noexcept {
  constexpr const char* kFunction = "prCommDeregisterBuffer";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (buffer == nullptr) return nullArgument(kFunction, "buffer", peerreduce::capi::kBufferHint);
    if (!peerreduce::capi::liveBuffers().contains(buffer)) {
      return unknownHandle(kFunction, "buffer", peerreduce::capi::kBufferHint);
    }
    // Collective: every rank deregisters, and the handle ends only when the communicator accepted it.
    const peerreduce::Status status = comm->comm->deregisterBuffer(buffer->buffer);
    if (!status.isOk()) return toResult(kFunction, status);
    if (peerreduce::capi::liveBuffers().remove(buffer)) delete buffer;
    return prSuccess;
  });
}

}  // extern "C"
