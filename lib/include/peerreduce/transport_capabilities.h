// The optional capabilities of a Transport (peerreduce/transport.h), each an interface of its own.
//
// Transport::capabilities() returns one TransportCapabilities whose members point at the capabilities
// the transport has and are null for those it lacks. A caller checks before it uses one and says what is
// missing in its error (kUnsupported naming the transport). A decorator forwards the struct, replacing
// only the members it wraps. The objects live as long as the transport that handed them out.
//
// Thread safety: as the transport's (one thread drives it at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce {

// A GPU stream (hipStream_t / cudaStream_t) or, on the simulator, any value (ignored: one queue per rank).
using StreamHandle = void*;

// Time marks, for the profiler: marks 0..count-1, set in order with a stream's work.
class TimeMarks {
 public:
  virtual ~TimeMarks() = default;
  // Makes marks 0..count-1 (called once, off the allreduce path).
  virtual Status reserveTimeMarks(std::size_t count) = 0;
  // Sets mark m in order with the work enqueued on `stream`: it is reached when everything enqueued
  // before it has finished. False when the stream cannot be timed now (a GPU stream being captured into
  // a graph). Re-marking a mark replaces it.
  virtual StatusOr<bool> markTime(std::size_t mark, StreamHandle stream) = 0;
  // The microseconds between two reached marks (real time on GPUs, virtual time on the simulator), or
  // nullopt while either is pending (or its work failed).
  virtual StatusOr<std::optional<double>> markedSpanUs(std::size_t from, std::size_t to) = 0;
};

// The allocation containing a buffer (what GPU IPC exports: cuMemGetAddressRange's answer).
struct BufferAllocation {
  const void* base = nullptr;
  std::size_t bytes = 0;
};

// A peer's registered buffer as this rank reaches it: a mapped device pointer on GPUs, the peer's host
// memory on the simulator. Writable: algorithms may deliver results into a peer's registered buffer.
struct PeerBufferView {
  int peer = -1;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
};

// User-buffer sharing between ranks (registration). GPU IPC shares whole allocations, so a record names
// an allocation and peers add the buffer's offset inside it.
class BufferSharing {
 public:
  virtual ~BufferSharing() = default;
  // The allocation containing [ptr, ptr + bytes).
  virtual StatusOr<BufferAllocation> allocationOf(const void* ptr, std::size_t bytes) = 0;
  // A record (at most kMaxPeerRecordBytes) from which peers open the allocation [base, base + bytes).
  virtual StatusOr<std::vector<std::byte>> exportBuffer(const void* base, std::size_t bytes) = 0;
  // Ends an export made by exportBuffer; records of it no longer open.
  virtual void releaseBuffer(const void* base, std::size_t bytes) = 0;
  // Opens [offset, offset + bytes) of the allocation `peer` exported as `record`. A record that is not a
  // live export of `peer` in this world is kCorrupt; a range outside the exported allocation or a peer
  // outside the world is kInvalidArgument; each names what was wrong.
  virtual StatusOr<PeerBufferView> openPeerBuffer(int peer, const std::vector<std::byte>& record, std::size_t offset,
                                                  std::size_t bytes) = 0;
};

// Batched submits: ExecutionRequest::batch, many buffers reduced by one operation.
class BatchSubmit {
 public:
  virtual ~BatchSubmit() = default;
  // The largest batch one submit with a plan of `algorithm` (one-shot or two-shot) may carry, in bytes
  // with every buffer rounded up to 16 (the GPU's vector); 0 when it takes no such batches. The same on
  // every rank given the same settings, so every rank groups a batch the same way.
  virtual std::size_t maxBatchBytes(Algorithm algorithm) const = 0;
};

// Streamed submits: an operation carried by one submit that cycles through the scratch
// (ExecutionRequest::ring_bytes): one larger than one execution of its plan fits there, instead of one submit
// per segment (select/segmenting.h), or one that fits but whose kernel lays the scratch out its own way. The results
// are the segments' to the bit: each element is folded from the same terms in the same order; only how the bytes wait
// for their place changes.
class StreamedSubmit {
 public:
  virtual ~StreamedSubmit() = default;
  // Whether one submit of `plan` (prepared on this transport) carries `count` elements of `dtype` through
  // `scratch_bytes` of scratch, of which one execution of the plan holds `fitting_count` (asked for every
  // operation that is not a batch: a transport may cycle through the scratch what fits it too, where its
  // kernel needs more room than the plan's slots). The same on every rank given the same settings, so every
  // rank splits an operation alike.
  virtual bool streams(const std::shared_ptr<const Plan>& plan, DataType dtype, std::size_t count,
                       std::size_t fitting_count, std::size_t scratch_bytes) = 0;
};

// The communicator's pinned host memory (lib/memory/pinned_host_pool.h, internal to the library): opaque
// to transports outside it.
class PinnedHostPool;

// The links the communicator agreed on: the ranks' rows with the link mask applied (peerreduce/topology.h).
// A pair the agreement made host-staged (LinkClass::kHostStaged, from the mask's host:A-B or host:all or
// from the transport's own topology) carries its traffic through pinned host memory, taken from
// `staging`, the communicator's pool, so PEERREDUCE_PINNED_LIMIT_BYTES bounds it and pinnedStats() shows
// it. A transport without this capability is refused at creation when the agreement made host-staged a
// link the transport itself did not report as one (kUnsupported naming the transport and the link).
class LinkAdoption {
 public:
  virtual ~LinkAdoption() = default;
  // Called at communicator creation on every rank, after the topology agreement and before any plan is
  // prepared; again for each communicator created over the same transport. `agreed` has the world's size;
  // `staging` is never null and lives as long as the transport keeps it.
  virtual Status adoptLinks(const Topology& agreed, std::shared_ptr<PinnedHostPool> staging) = 0;
};

// What a communicator tells its transport before openSymmetric about host-staged links.
struct HostStagingRequest {
  // world x world, row-major: 1 where the configuration's link mask makes the pair host-staged
  // (PEERREDUCE_LINK_MASK "host:A-B"); symmetric, the same on every rank (the configuration is agreed).
  std::vector<std::uint8_t> forced;
  // Where the rank's host-placed memory comes from: the communicator's pool, whose limit
  // (PEERREDUCE_PINNED_LIMIT_BYTES) applies and whose statistics show the traffic. Must outlive
  // openSymmetric; blocks taken from it keep what they need alive.
  std::shared_ptr<PinnedHostPool> pool;
};

// Host-staged links: ranks that cannot (or, by configuration, must not) reach each other's device
// memory directly reach it through pinned host memory.
class HostStaging {
 public:
  virtual ~HostStaging() = default;
  // Called once, before openSymmetric. kInvalidArgument for a matrix of the wrong size or a null pool.
  virtual Status configureHostStaging(const HostStagingRequest& request) = 0;
  // Called once every rank's connectPeers succeeded: names by which peers mapped this rank's memory
  // are removed (the mappings stay), so nothing is left behind in the system.
  virtual Status peersConnected() = 0;
};

// Kernel launches: how a transport that runs plans as GPU kernels sizes one execution, so tools can
// report how much of the device an operation keeps busy (peerreduce-bench's "blocks" column, through
// Communicator::explainSelection).
class KernelLaunches {
 public:
  virtual ~KernelLaunches() = default;
  // The blocks of the kernel that runs one execution (one segment) of `plan`, prepared on this transport,
  // over `count` elements of `elem_size` bytes: the multiprocessors it occupies. The same on every rank
  // (the kernel and its grid depend only on what the ranks share). kInvalidArgument for a plan of
  // another world size.
  virtual StatusOr<int> kernelBlocks(const std::shared_ptr<const Plan>& plan, std::size_t count,
                                     std::size_t elem_size) = 0;
};

// Access probes that fall back to host staging: a transport whose connectPeers tests each peer's mapping
// before trusting it, and that can move its memory so that a pair whose probe failed becomes a
// host-staged link. The communicator runs the sequence (lib/api/symmetric_exchange.cc): the ranks agree
// on the failed pairs, each rank falls back, and openSymmetric and connectPeers run a second time.
class ProbeFallback {
 public:
  virtual ~ProbeFallback() = default;
  // The peers whose access probe failed in the last connectPeers, ascending: the runtime allowed the
  // mapping but it did not carry the peer's token, or opening it said there is no usable path. Empty
  // when every probe passed or connectPeers failed for another reason (which no fallback can mend).
  virtual std::vector<int> failedProbes() const = 0;
  // Tears down what openSymmetric and connectPeers opened (mappings closed, host memory unregistered and
  // unmapped, the region released) and from now on treats `pairs` (world x world, row-major, symmetric,
  // the same on every rank) as host-staged, on top of the pairs it already had; openSymmetric and
  // connectPeers follow. kInvalidArgument for a matrix of the wrong size.
  virtual Status fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) = 0;
};

// Graph capture of streams: which capture a stream is being recorded into, so a communicator can give
// each capture's operations a channel of their own (peerreduce/transport.h, kMaxChannels). A transport
// without it has no captures (the simulator executes every operation as it is submitted).
class StreamCaptures {
 public:
  virtual ~StreamCaptures() = default;
  // The id of the graph capture `stream` is in now, unique in the process while it lasts; 0 when the
  // stream is not capturing.
  virtual StatusOr<std::uint64_t> captureOf(StreamHandle stream) = 0;
};

// Stop words: a word of host memory that the other ranks' processes of this machine can write (the
// communicator's operation log, lib/api/operation_log.h), which the transport's waits read as they read
// its own abort(): nonzero ends them with kAborted. A rank that refuses an operation its peers already
// launched (they disagree on it) sets their words, so their kernels stop within the abort ration instead
// of at their deadline. A transport without it keeps its deadline.
class StopWordAdoption {
 public:
  virtual ~StopWordAdoption() = default;
  // From now on `word` (4-byte aligned, alone on its page) is read with the transport's abort word; `owner`
  // keeps its memory mapped while the transport holds it. A later call replaces it. An error (the page
  // cannot be made visible to the device) leaves the transport as it was.
  virtual Status adoptStopWord(std::shared_ptr<void> owner, std::uint32_t* word) = 0;
};

struct TransportCapabilities {
  TimeMarks* time_marks = nullptr;
  BufferSharing* buffer_sharing = nullptr;
  BatchSubmit* batch_submit = nullptr;
  LinkAdoption* link_adoption = nullptr;
  HostStaging* host_staging = nullptr;
  KernelLaunches* kernel_launches = nullptr;
  ProbeFallback* probe_fallback = nullptr;
  StreamCaptures* stream_captures = nullptr;
  StopWordAdoption* stop_word_adoption = nullptr;
  StreamedSubmit* streamed_submit = nullptr;
};

}  // namespace peerreduce
