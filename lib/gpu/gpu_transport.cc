// GpuTransport: the host side of the GPU backend (see peerreduce/gpu.h).
//
// Symmetric region of a rank (one device allocation, exported through IPC; or, when the rank has a
// host-staged peer, one pinned host block mapped into every GPU and shared by name: gpu/host_staging.h):
//   [header: token written at open, read by peers as the access probe]
//   [counters: kMaxChannels signal areas of kCounterCount uint64 (per writer, flag and block), written
//    by peers' kernels; channel c of every rank uses area c]
//   [lines: kMaxChannels areas of low-latency receive lines (gpu/line_policy.h), written by peers]
//   [scratch: the bytes the communicator asked for; each stream's scratch is its own pool block]
// Private to the rank: per channel a control block (epoch bases, block counter) and a peer table
// in device memory, and the abort word and error report in host-mapped pinned memory, which the host
// reads and writes while kernels run.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "device_plan.h"
#include "gpu/batch_table.h"
#include "gpu/buffer_placement_gpu.h"
#include "gpu/calibrated_model.h"
#include "gpu/channel_order_gpu.h"
#include "gpu/copy_engine_launch.h"
#include "gpu/copy_engine_schedule.h"
#include "gpu/device_guard.h"
#include "gpu/device_sharing.h"
#include "gpu/device_values.h"
#include "gpu/fused_shape.h"
#include "gpu/gpu_check.h"
#include "gpu/host_registration.h"
#include "gpu/host_staging.h"
#include "gpu/kernel_choice.h"
#include "gpu/peer_record.h"
#include "gpu/probe_fault.h"
#include "memory/pinned_host_pool.h"
#include "memory/shared_host_segment.h"
#include "peerreduce/config.h"
#include "peerreduce/gpu.h"
#include "plan/flag_epochs.h"
#include "plan_kernel_launch.h"
#include "portability.h"
#include "topology/link_mask.h"
#include "util/log.h"

namespace peerreduce {
namespace gpu {

Status gpuError(hipError_t error, const char* call, const char* file, int line, int rank) {
  return unavailableError(std::string(PR_GPU_PLATFORM_NAME) + " call " + call + " failed on rank " +
                          std::to_string(rank) + " at " + file + ":" + std::to_string(line) + ": " +
                          hipGetErrorName(error) + " (" + hipGetErrorString(error) + ")");
}

namespace {

constexpr std::size_t kHeaderBytes = 256;  // the probe token, padded so the counters start cache-line aligned
constexpr std::size_t kAreaBytes = sizeof(std::uint64_t) * kCounterCount;  // one stream's counters
constexpr std::size_t kCounterBytes = kAreaBytes * kMaxChannels;
// IPC exports whole allocations at this granularity on NVIDIA and AMD; rounding up wastes nothing.
constexpr std::size_t kIpcGranularity = std::size_t{2} << 20;
constexpr std::uint64_t kTokenMagic = 0x7065657272656475ull;  // "peerredu"
static_assert(kMaxKernelBlocks == kMaxBlocks, "the settings' limit must be the kernels' counter layout's");
// synchronize() waits this many times the operation timeout: the kernel gives up on its own at the
// timeout and reports why; the host only needs to outwait it.
constexpr int kSyncTimeoutFactor = 2;
constexpr auto kSyncPollInterval = std::chrono::microseconds(20);

// The record's layout and validation live in gpu/peer_record.h (host-only, fuzzed); the IPC handle
// travels in it as opaque bytes.
static_assert(sizeof(hipIpcMemHandle_t) == kIpcHandleBytes, "the IPC handle does not fit the peer record");

std::string pointerText(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

std::uint64_t tokenFor(int rank, std::int64_t pid) {
  return kTokenMagic ^ (static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ull) ^ static_cast<std::uint64_t>(pid);
}

struct DevicePlan {
  DeviceStep* steps = nullptr;
  DeviceRef* sources = nullptr;
  std::uint32_t* signal_counts = nullptr;
  std::uint32_t* done_to = nullptr;
  std::uint32_t num_steps = 0;
  FusedShape shape;                         // a fused kernel runs the program when it has that shape
  std::vector<std::int32_t> staged_chunks;  // scratch accesses to host-placed regions (host_staging.h)
  std::vector<ScheduledPart> engine_parts;  // the program's copy-engine copies: how it runs in parts, else empty
};

// Every optional capability is its own: time marks are events, buffer sharing is IPC, batches run as one
// launch of the line kernels, host staging places the region in the communicator's pinned pool, and a
// failed access probe falls back to it.
class GpuTransport final : public Transport,
                           private TimeMarks,
                           private BufferSharing,
                           private BatchSubmit,
                           private HostStaging,
                           private KernelLaunches,
                           private ProbeFallback,
                           private StreamCaptures,
                           private StopWordAdoption,
                           private StreamedSubmit {
 public:
  GpuTransport(int rank, int world_size, int device, int multiprocessors, int max_blocks, std::uint64_t bytes_per_block,
               KernelPolicy kernels, std::uint64_t line_bytes_per_block, std::vector<std::uint8_t> probe_faults)
      : rank_(rank),
        world_size_(world_size),
        device_(device),
        multiprocessors_(multiprocessors),
        max_blocks_(max_blocks),
        bytes_per_block_(bytes_per_block),
        kernels_(kernels),
        line_bytes_per_block_(line_bytes_per_block),
        line_area_bytes_(lineAreaBytes(world_size)),
        probe_faults_(std::move(probe_faults)),
        engines_(rank, device, world_size),
        order_(rank, device),
        buffers_(rank, device, pointerFactsOf),
        scratch_bases_(static_cast<std::size_t>(world_size), nullptr) {}
  ~GpuTransport() override {
    release();
    releaseStopWord();
  }

  TransportIdentity identity() const override {
    return {std::string(PR_GPU_PLATFORM_NAME) + " gpu " + std::to_string(device_), architecture(), rank_, world_size_};
  }
  TransportCapabilities capabilities() override {
    TransportCapabilities caps;  // every capability but LinkAdoption (the GPU reports its staged pairs itself)
    caps.time_marks = this;
    caps.buffer_sharing = this;
    caps.batch_submit = this;
    caps.host_staging = this;
    caps.kernel_launches = this;
    caps.probe_fallback = this;
    caps.stream_captures = this;
    caps.stop_word_adoption = this;
    caps.streamed_submit = this;
    return caps;
  }

  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    PR_ASSIGN_OR_RETURN(std::vector<std::byte> record, openRegion(bytes));
    return OpenedRegion{std::move(record), nullptr};  // device memory: the host cannot address it
  }

 private:
  std::string architecture() const {
    int major = 0;
    int minor = 0;
    (void)hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, device_);
    (void)hipDeviceGetAttribute(&minor, hipDeviceAttributeComputeCapabilityMinor, device_);
    return std::string(PR_GPU_PLATFORM_NAME) == "cuda" ? "sm_" + std::to_string(major) + std::to_string(minor)
                                                       : "gfx_" + std::to_string(major) + std::to_string(minor);
  }

  StatusOr<std::vector<std::byte>> openRegion(std::size_t bytes) {
    if (region_ != nullptr) return invalidArgumentError("rank " + std::to_string(rank_) + " opened its memory twice");
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    const std::size_t raw = scratchStart() + bytes;
    region_bytes_ = (raw + kIpcGranularity - 1) / kIpcGranularity * kIpcGranularity;
    const std::uint64_t token = tokenFor(rank_, ::getpid());
    PR_ASSIGN_OR_RETURN(const bool reaches_all, deviceReachesAllVisible());
    if (placeRegionInHost(forced_, rank_, world_size_, reaches_all)) {
      PR_RETURN_IF_ERROR(openHostRegion(token));
      // Plans' private slots (Plan::private_slots) stay on the device: what a copy engine brought down
      // from host memory is reduced at device-memory speed. Laid out as the scratch is.
      PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&private_scratch_), region_bytes_ - scratchStart()));
    } else {
      PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&region_), region_bytes_));
      // Counters start at zero; lines too (flag 0 is never an operation's flag).
      PR_GPU_CHECK(rank_, hipMemset(region_, 0, scratchStart()));
      PR_GPU_CHECK(rank_, hipMemcpy(region_, &token, sizeof(token), hipMemcpyHostToDevice));
      // A copy from pageable memory may return before the device has the bytes, and a memset may be
      // asynchronous: another process reads the token through IPC as soon as our record is published, so
      // both must be done first (seen: a peer read 0 instead of the token with four processes on one GPU).
      PR_GPU_CHECK(rank_, hipDeviceSynchronize());
    }
    PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&control_), sizeof(ControlBlock) * kMaxChannels));
    PR_GPU_CHECK(rank_, hipMemset(control_, 0, sizeof(ControlBlock) * kMaxChannels));
    PR_GPU_CHECK(rank_,
                 hipHostMalloc(reinterpret_cast<void**>(&abort_word_), sizeof(std::uint32_t), hipHostMallocMapped));
    PR_GPU_CHECK(rank_, hipHostMalloc(reinterpret_cast<void**>(&error_), sizeof(ErrorReport), hipHostMallocMapped));
    *abort_word_ = 0;
    std::memset(error_, 0, sizeof(ErrorReport));
    PR_GPU_CHECK(rank_, hipHostGetDevicePointer(reinterpret_cast<void**>(&abort_word_device_), abort_word_, 0));
    PR_GPU_CHECK(rank_, hipHostGetDevicePointer(reinterpret_cast<void**>(&error_device_), error_, 0));
    PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&peer_table_), sizeof(PeerTable) * kMaxChannels));
    PeerRecord record{};
    record.rank = rank_;
    record.world_size = world_size_;
    record.device = device_;
    record.pid = ::getpid();
    record.region_bytes = region_bytes_;
    record.region_address = reinterpret_cast<std::uint64_t>(region_);
    record.token = token;
    record.max_blocks = max_blocks_;
    record.multiprocessors = multiprocessors_;
    record.placement = placement_;
    if (placement_ == RegionPlacement::kDevice) {
      hipIpcMemHandle_t handle;
      PR_GPU_CHECK(rank_, hipIpcGetMemHandle(&handle, region_));
      std::memcpy(record.ipc_handle, &handle, sizeof(handle));
    } else {
      const std::string name = host_block_.sharedName();
      std::memcpy(record.shared_name, name.c_str(), std::min(name.size(), kSharedNameBytes - 1));
    }
    return encodePeerRecord(record);
  }

  // The access probe: the peer's token, read through the mapping, must be what it wrote. A failure is
  // noted, not returned, so every failed pair is known when the ranks agree on the fallback.
  bool probePasses(const unsigned char* base, const PeerRecord& record, PeerPath path, const std::string& who,
                   std::string& failures) {
    std::uint64_t token = 0;
    // Default direction: the region may be device memory or mapped host memory.
    const hipError_t copied = hipMemcpy(&token, base, sizeof(token), hipMemcpyDefault);
    std::string why;
    if (copied != hipSuccess) {
      (void)hipGetLastError();
      why = std::string("access probe's copy failed: ") + hipGetErrorName(copied);
    } else if (probeFaultStrikes(probe_faults_, world_size_, rank_, record.rank, path)) {
      why = "access probe failed (PEERREDUCE_GPU_FAULT_PROBE_PAIRS)";
    } else if (token != record.token) {
      why = "access probe read " + std::to_string(token) + " instead of the token " + std::to_string(record.token) +
            " the peer wrote";
    } else {
      return true;
    }
    noteFailedProbe(record.rank, who + why, failures);
    return false;
  }

  void noteFailedProbe(int peer, const std::string& why, std::string& failures) {
    failed_probes_.push_back(peer);
    failures += why + "; ";
  }

  // Whether this device has peer access to, and from, every other visible device: if not, some peer may
  // have to reach this rank through host memory (host_staging.h: placeRegionInHost).
  StatusOr<bool> deviceReachesAllVisible() const {
    int devices = 0;
    PR_GPU_CHECK(rank_, hipGetDeviceCount(&devices));
    for (int other = 0; other < devices; ++other) {
      if (other == device_) continue;
      PR_ASSIGN_OR_RETURN(const bool both, peerAccessBothWays(other));
      if (!both) return false;
    }
    return true;
  }

  StatusOr<bool> peerAccessBothWays(int other) const {
    int devices = 0;
    PR_GPU_CHECK(rank_, hipGetDeviceCount(&devices));
    // A peer's device this process does not see (processes given different visible devices): the IPC
    // mapping and its access probe decide, as for any peer of another process.
    if (other == device_ || other < 0 || other >= devices) return true;
    int to = 0;
    int from = 0;
    PR_GPU_CHECK(rank_, hipDeviceCanAccessPeer(&to, device_, other));
    PR_GPU_CHECK(rank_, hipDeviceCanAccessPeer(&from, other, device_));
    return to != 0 && from != 0;
  }

  // The region in a pinned block of the communicator's pool (a shared-memory segment registered with the
  // runtime, mapped and portable), written through its host address; kernels and peers of this process
  // use its device pointer, peers of other processes map it by name.
  Status openHostRegion(std::uint64_t token) {
    if (pool_ == nullptr) {
      return unavailableError("rank " + std::to_string(rank_) +
                              " needs a host-staged region but has no pinned pool (the communicator configures it)");
    }
    auto block = pool_->acquire(region_bytes_, PinnedUse::kResident);
    if (!block.isOk()) return block.status().withContext("rank " + std::to_string(rank_) + " host-staged region");
    if (!block->locked()) {
      return unavailableError("rank " + std::to_string(rank_) + ": the GPU runtime would not register " +
                              std::to_string(region_bytes_) + " bytes of host memory for the host-staged region");
    }
    host_block_ = std::move(block).value();
    unsigned char* host = static_cast<unsigned char*>(host_block_.data());
    // A reused block holds an earlier region's counters: start from zero as device memory does.
    std::memset(host, 0, scratchStart());
    std::memcpy(host, &token, sizeof(token));
    PR_GPU_CHECK(rank_, hipHostGetDevicePointer(reinterpret_cast<void**>(&region_), host, 0));
    placement_ = RegionPlacement::kHost;
    return Status::ok();
  }

  // A peer process's host-placed region, mapped by name and registered here; kept until release.
  StatusOr<unsigned char*> mapPeerHostRegion(const PeerRecord& record, const std::string& who) {
    const std::size_t length = strnlen(record.shared_name, kSharedNameBytes);
    const std::string name(record.shared_name, length);
    if (name.empty()) {
      return unavailableError(who + "its host-staged region cannot be mapped from another process (no shared name)");
    }
    auto segment = SharedHostSegment::open(name, record.region_bytes);
    if (!segment.isOk()) return segment.status().withContext(who + "host-staged region");
    PR_RETURN_IF_ERROR(registerHostPages(segment->data(), segment->size()).withContext(who + "host-staged region"));
    void* device = nullptr;
    const hipError_t mapped = hipHostGetDevicePointer(&device, segment->data(), 0);
    if (mapped != hipSuccess) {
      unregisterHostPages(segment->data(), segment->size());
      PR_GPU_CHECK(rank_, mapped);
    }
    peer_segments_.push_back(std::move(segment).value());
    return static_cast<unsigned char*>(device);
  }

 public:
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    if (region_ == nullptr) return invalidArgumentError("rank " + std::to_string(rank_) + ": connect before open");
    if (records.size() != static_cast<std::size_t>(world_size_)) {
      return invalidArgumentError("rank " + std::to_string(rank_) + " got " + std::to_string(records.size()) +
                                  " peer records for " + std::to_string(world_size_) + " ranks");
    }
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    std::vector<PeerTable> tables(kMaxChannels, PeerTable{});
    topology_ = Topology(world_size_);
    std::vector<PeerRecord> decoded;
    failed_probes_.clear();
    std::string probe_failures;
    agreed_blocks_ = max_blocks_;
    for (int peer = 0; peer < world_size_; ++peer) {
      PR_ASSIGN_OR_RETURN(const PeerRecord record,
                          decodePeerRecord(records[static_cast<std::size_t>(peer)], peer,
                                           PeerRecordExpectation{rank_, world_size_, region_bytes_}));
      agreed_blocks_ = std::min(agreed_blocks_, record.max_blocks);
      decoded.push_back(record);
    }
    // Ranks of this process sharing a device must fit on it together (device_sharing.h).
    agreed_blocks_ = sharedDeviceBlockCap(decoded, agreed_blocks_);
    shares_device_ = sharesDeviceInProcess(decoded, rank_);
    host_placed_.assign(static_cast<std::size_t>(world_size_), false);
    host_link_.assign(static_cast<std::size_t>(world_size_), false);
    no_peer_access_.assign(static_cast<std::size_t>(world_size_), false);
    for (int peer = 0; peer < world_size_; ++peer) {
      host_placed_[static_cast<std::size_t>(peer)] =
          decoded[static_cast<std::size_t>(peer)].placement == RegionPlacement::kHost;
    }
    for (int peer = 0; peer < world_size_; ++peer) {
      const PeerRecord& record = decoded[static_cast<std::size_t>(peer)];
      const std::string who = "rank " + std::to_string(rank_) + " mapping rank " + std::to_string(peer) + ": ";
      unsigned char* base = nullptr;
      PeerPath path = PeerPath::kDirect;
      if (peer != rank_) {
        PR_ASSIGN_OR_RETURN(const bool access, peerAccessBothWays(record.device));
        PR_ASSIGN_OR_RETURN(
            path, choosePeerPath(PeerReach{rank_, peer, isForced(peer), access, record.placement, placement_}));
        host_link_[static_cast<std::size_t>(peer)] = isForced(peer) || !access;
        no_peer_access_[static_cast<std::size_t>(peer)] = !access;
      }
      if (peer == rank_) {
        base = region_;
      } else if (path == PeerPath::kHostMapped) {
        // Pinned host memory: this process's pointer is valid on every device (portable), another
        // process's segment is mapped by name.
        if (record.pid == ::getpid()) {
          base = reinterpret_cast<unsigned char*>(record.region_address);
        } else {
          PR_ASSIGN_OR_RETURN(base, mapPeerHostRegion(record, who));
        }
      } else if (record.pid == ::getpid() && record.device == device_) {
        // Another rank of this process on this very device: one address space, no peer access needed.
        base = reinterpret_cast<unsigned char*>(record.region_address);
      } else if (record.pid == ::getpid()) {
        // Another GPU of this process: its pointer is valid here once peer access is on.
        int can = 0;
        PR_GPU_CHECK(rank_, hipDeviceCanAccessPeer(&can, device_, record.device));
        if (!can) {
          return unavailableError(who + "device " + std::to_string(device_) + " cannot access device " +
                                  std::to_string(record.device) + " directly");
        }
        const hipError_t enabled = hipDeviceEnablePeerAccess(record.device, 0);
        if (enabled != hipSuccess && enabled != hipErrorPeerAccessAlreadyEnabled) {
          PR_GPU_CHECK(rank_, enabled);
        }
        (void)hipGetLastError();  // clear the "already enabled" error
        base = reinterpret_cast<unsigned char*>(record.region_address);
      } else {
        hipIpcMemHandle_t handle;
        std::memcpy(&handle, record.ipc_handle, sizeof(handle));
        const hipError_t opened =
            hipIpcOpenMemHandle(reinterpret_cast<void**>(&base), handle, hipIpcMemLazyEnablePeerAccess);
        if (opened == hipErrorPeerAccessUnsupported) {  // no usable path: a probe that failed
          (void)hipGetLastError();
          noteFailedProbe(peer, who + "opening its memory handle said peer access is unsupported", probe_failures);
          continue;
        }
        PR_GPU_CHECK(rank_, opened);
        opened_.push_back(base);
      }
      if (!probePasses(base, record, path, who, probe_failures)) continue;
      for (int area = 0; area < kMaxChannels; ++area) {
        PeerTable& table = tables[static_cast<std::size_t>(area)];
        table.counters[peer] = reinterpret_cast<std::uint64_t*>(base + kHeaderBytes + kAreaBytes * area);
        table.lines[peer] = base + kHeaderBytes + kCounterBytes + line_area_bytes_ * static_cast<std::size_t>(area);
        table.scratch[peer] = base + scratchStart();
        scratch_bases_[static_cast<std::size_t>(peer)] = base + scratchStart();
        table.counters_in_host_memory[peer] = record.placement == RegionPlacement::kHost ? 1 : 0;
      }
      if (peer != rank_) {
        topology_.setLink(rank_, peer, host_link_[static_cast<std::size_t>(peer)] ? hostLink() : defaultLink());
      }
    }
    // The ranks agree on these pairs and fall back to host-staged links for them (ProbeFallback).
    if (!failed_probes_.empty()) return unavailableError(probe_failures + "peer memory is not reachable directly");
    // A world with any region in host memory runs the pulling kernels only (host_staging.h); every rank
    // sees the same records, so every rank chooses alike.
    staged_world_ = std::find(host_placed_.begin(), host_placed_.end(), true) != host_placed_.end();
    if (staged_world_) kernels_ = hostStagedKernelPolicy(kernels_, world_size_);
    // Links between other ranks: assumed like ours (a homogeneous node), host-staged where the mask forces
    // it; the communicator exchanges each rank's own row so every rank ends up with the measured matrix.
    // A pair is host-staged where the pair itself is (forced, or no peer access), not wherever a region
    // lies in host memory: a peer with direct access that reads a host-placed region still crosses PCIe,
    // but the matrix stays the one the simulator builds from the same mask, so both choose the same plans
    // (and the same bits).
    const auto n = static_cast<std::size_t>(world_size_);
    for (int a = 0; a < world_size_; ++a) {
      for (int b = 0; b < world_size_; ++b) {
        if (a == b || a == rank_) continue;
        const bool forced =
            forced_.size() == n * n && forced_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] != 0;
        topology_.setLink(a, b, forced ? hostLink() : defaultLink());
      }
    }
    topology_.setDevice(modelDevice(architecture()));
    PR_GPU_CHECK(rank_, hipMemcpy(peer_table_, tables.data(), sizeof(PeerTable) * kMaxChannels, hipMemcpyHostToDevice));
    PR_GPU_CHECK(rank_, hipDeviceSynchronize());
    connected_ = true;
    return Status::ok();
  }

  Topology topology() const override { return topology_; }

  std::vector<int> failedProbes() const override { return failed_probes_; }

  Status fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) override {
    if (pool_ == nullptr) {
      return unavailableError("rank " + std::to_string(rank_) + ": no pinned pool to fall back to host staging with");
    }
    std::vector<std::uint8_t> forced = forced_;
    PR_RETURN_IF_ERROR(addHostStagedPairs(forced, pairs, world_size_).withContext("rank " + std::to_string(rank_)));
    // The first region's name goes now (peers unmap their mappings in their own fallback).
    if (host_block_.valid()) (void)host_block_.endSharing();
    release();
    forced_ = std::move(forced);
    connected_ = false;
    failed_probes_.clear();
    return Status::ok();
  }

  Status preparePlan(const std::shared_ptr<const Plan>& plan) override {
    const DevicePlan* staged = nullptr;
    return devicePlan(plan, &staged);
  }

  // Every operation of a channel after the channel's previous one, whatever stream each is on
  // (gpu/channel_order.h): the stream waits for the previous one's event when it is another stream.
  Status submit(const ExecutionRequest& request, StreamHandle stream) override {
    PR_RETURN_IF_ERROR(asyncError());
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    const auto gpu_stream = static_cast<hipStream_t>(stream);
    PR_RETURN_IF_ERROR(order_.before(request.channel, request.capture, gpu_stream));
    PR_RETURN_IF_ERROR(enqueue(request, stream));
    return order_.after(request.channel, request.capture, gpu_stream);
  }

  StatusOr<std::uint64_t> captureOf(StreamHandle stream) override {
    return order_.captureOf(static_cast<hipStream_t>(stream));
  }

  Status enqueue(const ExecutionRequest& request, StreamHandle stream) {
    if (!connected_) return unavailableError("rank " + std::to_string(rank_) + ": submit before peers are connected");
    if (request.channel < 0 || request.channel >= kMaxChannels) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": channel " + std::to_string(request.channel) +
                                  " outside 0.." + std::to_string(kMaxChannels - 1));
    }
    PR_RETURN_IF_ERROR(
        checkStreamOfSharedDevice(shares_device_, isSharedDefaultStream(static_cast<hipStream_t>(stream)), rank_));
    const DevicePlan* plan = nullptr;
    PR_RETURN_IF_ERROR(devicePlan(request.plan, &plan));
    const std::size_t elem = dataTypeSize(request.dtype);
    // Streamed, the operation cycles through its lease (streams); else its layout's slots hold it whole.
    const std::size_t needed =
        request.ring_bytes != 0 ? request.ring_bytes : scratchBytes(*request.plan, request.layout, elem);
    const std::size_t scratch_capacity = region_bytes_ - scratchStart();
    if (request.scratch_offset > scratch_capacity || needed > scratch_capacity - request.scratch_offset) {
      return outOfMemoryError("rank " + std::to_string(rank_) + ": operation needs " + std::to_string(needed) +
                              " bytes of scratch at offset " + std::to_string(request.scratch_offset) +
                              ", region has " + std::to_string(scratch_capacity));
    }
    LaunchArgs args{};
    args.steps = plan->steps;
    args.sources = plan->sources;
    args.signal_counts = plan->signal_counts;
    args.done_to = plan->done_to;
    args.num_steps = plan->num_steps;
    args.rank = rank_;
    args.world_size = world_size_;
    args.op = static_cast<std::int32_t>(request.op);
    args.send = request.send;
    args.recv = request.recv;
    args.count = request.count;
    args.chunk_capacity = request.layout.chunk_capacity;
    const Collective collective = request.plan->collective;
    args.send_block_stride = blockStrideOf(collective, BufferKind::kInput, request.block_stride);
    args.recv_block_stride = blockStrideOf(collective, BufferKind::kOutput, request.block_stride);
    args.slot_bytes = scratchSlotBytes(request.layout, elem);
    args.scratch_offset = request.scratch_offset;
    args.num_chunks = request.layout.num_chunks;
    args.elem_size = static_cast<std::uint32_t>(elem);
    // The stream's own signal area: its counters in every rank's region, its bases and block count.
    args.peers = peer_table_ + request.channel;
    args.control = control_ + request.channel;
    args.abort_word = stop_word_device_ != nullptr ? stop_word_device_ : abort_word_device_;
    args.error = error_device_;
    timeout_ns_ = static_cast<std::uint64_t>(request.timeout.count()) * 1000000ull;
    args.timeout_ns = timeout_ns_;
    args.ready_flag = plan->shape.ready_flag;
    args.result_flag = plan->shape.result_flag;
    args.ready_wait_step = plan->shape.ready_wait_step;
    args.result_wait_step = plan->shape.result_wait_step;
    args.line_capacity = lineCapacityBytes(world_size_);
    args.root = request.plan->root;
    args.overlap_launch = kernels_.overlap_launch ? 1 : 0;
    args.private_scratch = private_scratch_;
    args.first_private_slot = firstPrivateSlot(*request.plan);
    std::uint64_t bytes = static_cast<std::uint64_t>(request.count) * elem;
    const bool batched = !request.batch.empty();
    const Algorithm plan_algorithm = request.plan->algorithm;
    BatchTable table;
    PR_RETURN_IF_ERROR(checkPlacement(request, args, elem));
    if (world_size_ == 1) return copyAlone(request, elem, static_cast<hipStream_t>(stream));
    if (batched) {
      PR_ASSIGN_OR_RETURN(bytes, fillBatchTable(request, elem, rank_, table));
      args.count = bytes / elem;  // every vector of every item
    }
    if (!batched && runsOnCopyEngines(kernels_.copy_engines, !plan->engine_parts.empty(), request.op, request.dtype)) {
      recordStagedTraffic(*plan, request.layout, elem);  // the copy engines' bytes through host memory
      return submitWithCopyEngines(request, *plan, args, bytes, static_cast<hipStream_t>(stream));
    }
    KernelChoice choice = chooseKernel(plan->shape.kind, bytes, world_size_, kernels_);
    // Past two ranks the pushing collectives run only through a ring (streams() said so to every rank alike).
    if (streamsOnly(choice, world_size_) && request.ring_bytes == 0) choice = KernelChoice::kInterpreter;
    if (batched && choice != KernelChoice::kOneShotLines && choice != KernelChoice::kTwoShotLines) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": a batch of " + std::to_string(bytes) +
                                  " bytes (rounded to vectors) with a " + std::string(algorithmName(plan_algorithm)) +
                                  " plan does not run as one low-latency launch here (at most " +
                                  std::to_string(maxBatchBytes(plan_algorithm)) + " bytes)");
    }
    switch (choice) {
      case KernelChoice::kInterpreter:
        args.fused = 0;
        break;
      case KernelChoice::kOneShotPull:
        args.fused = kFusedOneShot;
        break;
      case KernelChoice::kTwoShotPull:
        args.fused = kFusedTwoShot;
        break;
      case KernelChoice::kTwoShotPush:
        args.fused = kPushTwoShot;
        break;
      case KernelChoice::kOneShotPush:
        args.fused = kPushOneShot;
        break;
      case KernelChoice::kOneShotLines:
        args.fused = kLowLatencyOneShot;
        break;
      case KernelChoice::kTwoShotLines:
        args.fused = kLowLatencyTwoShot;
        break;
      case KernelChoice::kReduceScatterLines:
        args.fused = kLowLatencyReduceScatter;
        break;
      case KernelChoice::kAllGatherLines:
        args.fused = kLowLatencyAllGather;
        break;
      case KernelChoice::kBroadcastLines:
        args.fused = kLowLatencyBroadcast;
        break;
      case KernelChoice::kReduceScatterPush:
        args.fused = kPushReduceScatter;
        break;
      case KernelChoice::kAllGatherPush:
        args.fused = kPushAllGather;
        break;
      case KernelChoice::kBroadcastPush:
        args.fused = kPushBroadcast;
        break;
    }
    // The pushing one-shot and collectives move each block's slice in pieces (the two-shot ignores it).
    if (runsPushed(choice)) args.push_piece_bytes = kernels_.push_one_shot_piece_bytes;
    if (request.ring_bytes != 0) {
      // Only what streams() accepted is streamed: the same choice from the same inputs.
      if (batched || !streamsPieces(choice, kernels_, request.ring_bytes, launchBlocksOf(choice, bytes), world_size_)) {
        return internalError("rank " + std::to_string(rank_) + ": a streamed operation of " + std::to_string(bytes) +
                             " bytes whose kernel does not stream through " + std::to_string(request.ring_bytes) +
                             " bytes of scratch");
      }
      args.ring_bytes = request.ring_bytes;
      args.push_piece_bytes = kernels_.push_stream_piece_bytes;  // streamed pieces have their own size
    }
    // The push and line kernels have no launch-wide synchronisation, so they may use every
    // multiprocessor; the fused pulling kernels keep PEERREDUCE_GPU_PULL_MAX_BLOCKS (launchBlocks).
    const auto blocks = static_cast<unsigned>(launchBlocksOf(choice, bytes));
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    if (staged_world_ && runsAsLines(choice) && pool_ != nullptr) {
      // Lines move their own bytes, not the plan's steps' (host_staging.h).
      pool_->recordStaged(lineStagedBytes(choice, bytes, rank_, request.plan->root, host_placed_));
    } else {
      recordStagedTraffic(*plan, request.layout, elem);
    }
    if (batched) {
      PR_GPU_CHECK(rank_, launchBatchedLowLatencyKernel(args, table, static_cast<int>(request.dtype), blocks,
                                                        static_cast<hipStream_t>(stream)));
      return Status::ok();
    }
    PR_GPU_CHECK(rank_,
                 launchPlanKernel(args, static_cast<int>(request.dtype), blocks, static_cast<hipStream_t>(stream)));
    return Status::ok();
  }

  // A world of one rank: every collective's result is its input (a sum, product, minimum or maximum of
  // one term, an average over one rank), so the operation is a device copy, or nothing in place, with no
  // kernel and no signal (NCCL does the same; a kernel cost 4.9 us at 8 B where NCCL's copy took 1.0).
  Status copyAlone(const ExecutionRequest& request, std::size_t elem, hipStream_t stream) {
    auto copy = [&](const void* send, void* recv, std::size_t count) -> Status {
      if (send == recv || count == 0 || send == nullptr) return Status::ok();
      PR_GPU_CHECK(rank_, hipMemcpyAsync(recv, send, count * elem, hipMemcpyDeviceToDevice, stream));
      return Status::ok();
    };
    for (const BatchItem& item : request.batch) PR_RETURN_IF_ERROR(copy(item.send, item.recv, item.count));
    if (!request.batch.empty()) return Status::ok();
    return copy(request.send, request.recv, request.count);
  }

  // Every user buffer the operation touches is memory of this device (gpu/buffer_placement.h). A buffer
  // holding every block of a reduce-scatter's input or an all-gather's output spans num_blocks strides.
  Status checkPlacement(const ExecutionRequest& request, const LaunchArgs& args, std::size_t elem) {
    for (std::size_t i = 0; i < request.batch.size(); ++i) {
      const BatchItem& item = request.batch[i];
      const std::string name = "batch item " + std::to_string(i);
      PR_RETURN_IF_ERROR(buffers_.check(item.send, item.count * elem, (name + "'s send buffer").c_str()));
      PR_RETURN_IF_ERROR(buffers_.check(item.recv, item.count * elem, (name + "'s receive buffer").c_str()));
    }
    if (!request.batch.empty()) return Status::ok();
    const auto blocks = static_cast<std::size_t>(std::max(request.plan->num_blocks, 1));
    auto extent = [&](std::uint64_t stride) {
      return ((stride == 0 ? 0 : blocks - 1) * stride + request.count) * elem;
    };
    // A null buffer is one the collective does not read on this rank (a broadcast's send buffer off
    // the root); the argument checks refused every null buffer a rank uses.
    if (request.send != nullptr)
      PR_RETURN_IF_ERROR(buffers_.check(request.send, extent(args.send_block_stride), "send buffer"));
    if (request.recv != nullptr)
      PR_RETURN_IF_ERROR(buffers_.check(request.recv, extent(args.recv_block_stride), "receive buffer"));
    return Status::ok();
  }

  StatusOr<int> kernelBlocks(const std::shared_ptr<const Plan>& plan, std::size_t count,
                             std::size_t elem_size) override {
    const DevicePlan* device = nullptr;
    PR_RETURN_IF_ERROR(devicePlan(plan, &device));
    const std::uint64_t bytes = static_cast<std::uint64_t>(count) * elem_size;
    return launchBlocksOf(chooseKernel(device->shape.kind, bytes, world_size_, kernels_), bytes);
  }

  // The pinned pool's count of bytes through host-placed scratch (docs/MEMORY.md), whoever moves them.
  void recordStagedTraffic(const DevicePlan& plan, const ChunkLayout& layout, std::size_t elem) {
    if (!plan.staged_chunks.empty() && pool_ != nullptr)
      pool_->recordStaged(stagedBytes(plan.staged_chunks, layout, elem));
  }

  // A program with copy-engine copies, in parts (gpu/copy_engine_launch.h); the interpreter's block count.
  Status submitWithCopyEngines(const ExecutionRequest& request, const DevicePlan& plan, const LaunchArgs& args,
                               std::uint64_t bytes, hipStream_t stream) {
    const auto blocks = static_cast<unsigned>(launchBlocksOf(KernelChoice::kInterpreter, bytes));
    CopyAddressing where;
    where.collective = request.plan->collective;
    where.send = request.send;
    where.recv = request.recv;
    where.layout = request.layout;
    where.block_stride = request.block_stride;
    where.elem_size = dataTypeSize(request.dtype);
    where.scratch_offset = request.scratch_offset;
    where.slot_bytes = args.slot_bytes;
    where.scratch = &scratch_bases_;
    where.private_scratch = private_scratch_;
    where.first_private_slot = firstPrivateSlot(*request.plan);
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    return engines_.enqueue(plan.engine_parts, request.plan->programs[static_cast<std::size_t>(rank_)], args, where,
                            static_cast<int>(request.dtype), blocks, request.channel, stream);
  }

  bool streams(const std::shared_ptr<const Plan>& plan, DataType dtype, std::size_t count, std::size_t fitting_count,
               std::size_t scratch_bytes) override {
    const DevicePlan* prepared = nullptr;
    if (!kernels_.push_stream || !devicePlan(plan, &prepared).isOk() || !prepared->engine_parts.empty()) return false;
    const std::uint64_t bytes = static_cast<std::uint64_t>(count) * dataTypeSize(dtype);
    const KernelChoice choice = chooseKernel(prepared->shape.kind, bytes, world_size_, kernels_);
    // What one execution holds streams only where the kernel runs nowhere else (past two ranks); at two ranks
    // it keeps each piece's own place, the measured faster form there.
    if (count <= fitting_count && !streamsOnly(choice, world_size_)) return false;
    return streamsPieces(choice, kernels_, scratch_bytes, launchBlocksOf(choice, bytes), world_size_);
  }

  std::size_t maxBatchBytes(Algorithm algorithm) const override {
    if (algorithm == Algorithm::kOneShot) return gpu::maxBatchBytes(FusedKind::kOneShot, world_size_, kernels_);
    if (algorithm == Algorithm::kTwoShot) return gpu::maxBatchBytes(FusedKind::kTwoShot, world_size_, kernels_);
    return 0;
  }

  Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) override {
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    const auto deadline = std::chrono::steady_clock::now() + timeout * kSyncTimeoutFactor;
    // Bounded by `timeout`: a kernel stuck past its own deadline is reported, never waited on forever.
    for (;;) {
      const hipError_t state = hipStreamQuery(static_cast<hipStream_t>(stream));
      if (state == hipSuccess) break;
      if (state != hipErrorNotReady) PR_GPU_CHECK(rank_, state);
      if (std::chrono::steady_clock::now() > deadline) {
        PR_RETURN_IF_ERROR(asyncError());
        return timeoutError("rank " + std::to_string(rank_) + ": the GPU stream did not finish within " +
                            std::to_string(timeout.count() * kSyncTimeoutFactor) +
                            " ms (twice PEERREDUCE_TIMEOUT_MS); work queued before the operation may be stuck. If "
                            "it can take this long, raise PEERREDUCE_TIMEOUT_MS");
      }
      std::this_thread::sleep_for(kSyncPollInterval);
    }
    return asyncError();
  }

  Status asyncError() const override {
    const auto* report = const_cast<const volatile ErrorReport*>(error_);
    if (report == nullptr || report->code == 0) return Status::ok();
    const std::string where =
        report->step == kFenceStep ? std::string("entry fence") : "step #" + std::to_string(report->step);
    const std::string what = "rank " + std::to_string(rank_) + " " + where + " waiting for rank " +
                             std::to_string(report->peer) + " (counter at " + std::to_string(report->value >> 32) +
                             ", needed " + std::to_string(report->value & 0xffffffffull) + ")";
    if (report->code == static_cast<std::uint64_t>(ErrorCode::kAborted)) {
      return abortedError(what + ": aborted");
    }
    // The error stays (as NCCL's asynchronous errors do): say what bounded the wait and what to do, since a
    // rank that was merely late (writing a checkpoint) ends the run here too.
    return timeoutError(what + ": no signal within " + std::to_string(timeout_ns_ / 1000000) +
                        " ms (PEERREDUCE_TIMEOUT_MS); the peer stalled, crashed or runs a different operation. If a "
                        "rank can be this late, raise PEERREDUCE_TIMEOUT_MS; the communicator must now be destroyed "
                        "and created anew");
  }

  // User-buffer registration. The allocation of a device pointer is found with the runtime's address
  // range query; it is exported once (the communicator's cache keys by base) as an IPC handle in a
  // BufferRecord; peers of another process open the handle (each export once, kept open until this
  // transport ends), peers of this process use the address directly.
  StatusOr<BufferAllocation> allocationOf(const void* ptr, std::size_t bytes) override {
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    void* base = nullptr;
    std::size_t size = 0;
    if (hipMemGetAddressRange(&base, &size, const_cast<void*>(ptr)) != hipSuccess) {
      (void)hipGetLastError();
      return invalidArgumentError("rank " + std::to_string(rank_) + ": buffer at " + pointerText(ptr) +
                                  " is not device memory allocated with hipMalloc/cudaMalloc; register device buffers");
    }
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    if (bytes > size - (p - b)) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": buffer of " + std::to_string(bytes) +
                                  " bytes at " + pointerText(ptr) + " runs past the end of its allocation of " +
                                  std::to_string(size) + " bytes");
    }
    return BufferAllocation{base, size};
  }

  StatusOr<std::vector<std::byte>> exportBuffer(const void* base, std::size_t bytes) override {
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    if (exports_.contains(b)) {
      return internalError("rank " + std::to_string(rank_) + ": allocation at " + pointerText(base) +
                           " is already exported");
    }
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    hipIpcMemHandle_t handle;
    PR_GPU_CHECK(rank_, hipIpcGetMemHandle(&handle, const_cast<void*>(base)));
    BufferRecord record{};
    record.rank = rank_;
    record.device = device_;
    record.pid = ::getpid();
    record.export_id = next_export_id_++;
    record.base = b;
    record.bytes = bytes;
    std::memcpy(record.ipc_handle, &handle, sizeof(handle));
    exports_.emplace(b, record.export_id);
    return encodeBufferRecord(record);
  }

  void releaseBuffer(const void* base, std::size_t /*bytes*/) override {
    exports_.erase(reinterpret_cast<std::uintptr_t>(base));
  }

  StatusOr<PeerBufferView> openPeerBuffer(int peer, const std::vector<std::byte>& bytes, std::size_t offset,
                                          std::size_t length) override {
    if (peer < 0 || peer >= world_size_ || peer == rank_) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": cannot open a buffer of rank " +
                                  std::to_string(peer) + " in a world of " + std::to_string(world_size_));
    }
    // A registered buffer is the user's device memory: reached through peer access (IPC), which a pair
    // the mask only forces host-staged still has, and a pair whose devices lack it does not.
    if (no_peer_access_.size() == static_cast<std::size_t>(world_size_) &&
        no_peer_access_[static_cast<std::size_t>(peer)]) {
      return unsupportedError("rank " + std::to_string(rank_) + " cannot open a registered buffer of rank " +
                              std::to_string(peer) +
                              ": their devices have no peer access (their link is host-staged), and registered "
                              "buffers are device memory");
    }
    PR_ASSIGN_OR_RETURN(const BufferRecord record, decodeBufferRecord(bytes, peer, rank_));
    if (length == 0 || offset > record.bytes || length > record.bytes - offset) {
      return invalidArgumentError("rank " + std::to_string(rank_) + " opening a buffer of rank " +
                                  std::to_string(peer) + ": range at offset " + std::to_string(offset) + " of " +
                                  std::to_string(length) + " bytes is outside the registered allocation of " +
                                  std::to_string(record.bytes) + " bytes");
    }
    unsigned char* base = nullptr;
    if (record.pid == ::getpid()) {
      base = reinterpret_cast<unsigned char*>(record.base);  // peer access was enabled by connectPeers
    } else {
      const auto key = std::make_pair(peer, record.export_id);
      auto it = opened_buffers_.find(key);
      if (it == opened_buffers_.end()) {
        PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
        hipIpcMemHandle_t handle;
        std::memcpy(&handle, record.ipc_handle, sizeof(handle));
        void* mapped = nullptr;
        PR_GPU_CHECK(rank_, hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess));
        it = opened_buffers_.emplace(key, mapped).first;
      }
      base = static_cast<unsigned char*>(it->second);
    }
    return PeerBufferView{peer, reinterpret_cast<std::byte*>(base + offset), length};
  }

  // Time marks are events; a stream being captured into a graph is not timed (its events would be
  // recorded at every replay, long after the record they belong to was read).
  Status reserveTimeMarks(std::size_t count) override {
    PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
    destroyMarks();
    marks_.assign(count, nullptr);
    marked_.assign(count, false);
    for (hipEvent_t& e : marks_) PR_GPU_CHECK(rank_, hipEventCreate(&e));
    return Status::ok();
  }

  StatusOr<bool> markTime(std::size_t mark, StreamHandle stream) override {
    if (mark >= marks_.size()) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": time mark " + std::to_string(mark) + " of " +
                                  std::to_string(marks_.size()) + " reserved");
    }
    marked_[mark] = false;
    hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
    PR_GPU_CHECK(rank_, hipStreamIsCapturing(static_cast<hipStream_t>(stream), &capture));
    if (capture != hipStreamCaptureStatusNone) return false;
    PR_GPU_CHECK(rank_, hipEventRecord(marks_[mark], static_cast<hipStream_t>(stream)));
    marked_[mark] = true;
    return true;
  }

  StatusOr<std::optional<double>> markedSpanUs(std::size_t from, std::size_t to) override {
    if (from >= marks_.size() || to >= marks_.size()) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": time marks " + std::to_string(from) + ", " +
                                  std::to_string(to) + " of " + std::to_string(marks_.size()) + " reserved");
    }
    if (!marked_[from] || !marked_[to]) return std::optional<double>{};
    for (hipEvent_t e : {marks_[from], marks_[to]}) {
      const hipError_t state = hipEventQuery(e);
      if (state == hipErrorNotReady) return std::optional<double>{};
      PR_GPU_CHECK(rank_, state);
    }
    float ms = 0.0f;
    PR_GPU_CHECK(rank_, hipEventElapsedTime(&ms, marks_[from], marks_[to]));
    return std::optional<double>{static_cast<double>(ms) * 1000.0};
  }

  // The device error word is the detector's evidence: the peer a wait timed out on is lost (it stalled
  // or crashed). Without a timeout nothing is known either way.
  PeerHealth peerHealth(int peer) const override {
    if (peer < 0 || peer >= world_size_) return PeerHealth::kUnknown;
    const auto* report = const_cast<const volatile ErrorReport*>(error_);
    if (report == nullptr || report->code == 0 || report->code == static_cast<std::uint64_t>(ErrorCode::kAborted)) {
      return peer == rank_ ? PeerHealth::kAlive : PeerHealth::kUnknown;
    }
    return static_cast<int>(report->peer) == peer ? PeerHealth::kLost : PeerHealth::kUnknown;
  }

  Status configureHostStaging(const HostStagingRequest& request) override {
    const auto n = static_cast<std::size_t>(world_size_);
    if (region_ != nullptr) {
      return invalidArgumentError("rank " + std::to_string(rank_) +
                                  ": host staging configured after the region opened");
    }
    if (request.pool == nullptr)
      return invalidArgumentError("rank " + std::to_string(rank_) + ": host staging without a pinned pool");
    if (!request.forced.empty() && request.forced.size() != n * n) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": host-staged pairs for " +
                                  std::to_string(request.forced.size()) + " entries, the world has " +
                                  std::to_string(n) + " x " + std::to_string(n));
    }
    forced_ = request.forced;
    pool_ = request.pool;
    return Status::ok();
  }

  Status peersConnected() override {
    if (!host_block_.valid()) return Status::ok();
    return host_block_.endSharing().withContext("rank " + std::to_string(rank_) + " host-staged region");
  }

  void abort() override {
    if (abort_word_ != nullptr) *reinterpret_cast<volatile std::uint32_t*>(abort_word_) = 1;
    if (stop_word_ != nullptr) std::atomic_ref<std::uint32_t>(*stop_word_).store(1, std::memory_order_release);
  }

  // The kernels read the stop word in place of the abort word (abort() writes both), so a peer's process
  // ends this rank's waits by writing it. Its page is registered with the device; the previous word's
  // page, if any, is released.
  Status adoptStopWord(std::shared_ptr<void> owner, std::uint32_t* word) override {
    if (word == nullptr || owner == nullptr)
      return invalidArgumentError("rank " + std::to_string(rank_) + ": no stop word");
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* base = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(word) / page * page);
    PR_RETURN_IF_ERROR(registerHostPages(base, page).withContext("rank " + std::to_string(rank_) + " stop word"));
    std::uint32_t* device = nullptr;
    const hipError_t mapped = hipHostGetDevicePointer(reinterpret_cast<void**>(&device), word, 0);
    if (mapped != hipSuccess) {
      unregisterHostPages(base, page);
      return unavailableError("rank " + std::to_string(rank_) + ": the stop word has no device address (" +
                              std::string(hipGetErrorString(mapped)) + ")");
    }
    releaseStopWord();
    if (abort_word_ != nullptr && *reinterpret_cast<volatile std::uint32_t*>(abort_word_) != 0) {
      std::atomic_ref<std::uint32_t>(*word).store(1, std::memory_order_release);  // aborted before: stays so
    }
    stop_owner_ = std::move(owner);
    stop_word_ = word;
    stop_word_device_ = device;
    stop_page_ = base;
    return Status::ok();
  }

  void releaseStopWord() {
    if (stop_page_ != nullptr) unregisterHostPages(stop_page_, static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
    stop_page_ = nullptr;
    stop_word_ = nullptr;
    stop_word_device_ = nullptr;
    stop_owner_.reset();
  }

 private:
  bool isForced(int peer) const {
    const auto n = static_cast<std::size_t>(world_size_);
    return forced_.size() == n * n &&
           forced_[static_cast<std::size_t>(rank_) * n + static_cast<std::size_t>(peer)] != 0;
  }

  std::size_t scratchStart() const {
    return kHeaderBytes + kCounterBytes + line_area_bytes_ * static_cast<std::size_t>(kMaxChannels);
  }

  // Peer access over NVLink / XGMI, priced with the cost model's fitted parameters where this device
  // has them (gpu/calibrated_model.h).
  LinkInfo defaultLink() const { return modelLink(architecture()); }
  // A host-staged pair: the figures the link mask gives this architecture (topology/link_mask.h).
  LinkInfo hostLink() const { return hostStagedLinkFor(architecture()); }

  // What submit launches for `bytes` of kernel `choice`, and what kernelBlocks reports.
  int launchBlocksOf(KernelChoice choice, std::uint64_t bytes) const {
    return launchBlocks(choice, bytes, agreed_blocks_, bytes_per_block_, line_bytes_per_block_,
                        kernels_.interpreter_max_blocks, kernels_.pull_max_blocks);
  }

  Status devicePlan(const std::shared_ptr<const Plan>& plan, const DevicePlan** out) {
    if (!plan || plan->world_size != world_size_) {
      return invalidArgumentError("rank " + std::to_string(rank_) + ": plan missing or for another world size");
    }
    if (plan->num_flags > kMaxPlanFlags) {
      return unsupportedError("plan '" + plan->description + "' uses " + std::to_string(plan->num_flags) +
                              " flags; the GPU kernels support " + std::to_string(kMaxPlanFlags));
    }
    auto it = plans_.find(plan.get());
    if (it == plans_.end()) {
      DevicePlan device;
      if (kernels_.fused) device.shape = matchFusedShape(*plan, rank_);
      const RankProgram& program = plan->programs[static_cast<std::size_t>(rank_)];
      std::vector<DeviceStep> steps;
      for (const Step& s : program.steps) {
        DeviceStep d{};
        d.kind = static_cast<std::int32_t>(s.kind);
        d.finalize = s.finalize ? 1 : 0;
        d.copy_engine = s.copy_engine ? 1 : 0;
        d.chunk = s.chunk;
        d.dst = DeviceRef{s.dst.rank, static_cast<std::int32_t>(s.dst.kind), s.dst.slot};
        d.src_begin = s.src_begin;
        d.src_count = s.src_count;
        d.peer = s.peer;
        d.flag = s.flag;
        d.value = s.value;
        if (s.src_count > static_cast<std::uint32_t>(kMaxRanks + 1)) {
          return unsupportedError("a step with " + std::to_string(s.src_count) + " sources exceeds the kernel's limit");
        }
        steps.push_back(d);
      }
      std::vector<DeviceRef> sources;
      for (const BufferRef& r : program.sources)
        sources.push_back(DeviceRef{r.rank, static_cast<std::int32_t>(r.kind), r.slot});
      std::vector<std::uint32_t> counts(static_cast<std::size_t>(kMaxRanks) * kMaxDeviceFlags, 0);
      const auto n = static_cast<std::size_t>(world_size_);
      for (std::size_t writer = 0; writer < n; ++writer) {
        for (int flag = 0; flag < plan->num_flags; ++flag) {
          counts[writer * kMaxDeviceFlags + static_cast<std::size_t>(flag)] =
              plan->signal_counts[(static_cast<std::size_t>(rank_) * n + writer) *
                                      static_cast<std::size_t>(plan->num_flags) +
                                  static_cast<std::size_t>(flag)];
        }
      }
      std::vector<std::uint32_t> done_to(static_cast<std::size_t>(kMaxRanks), 0);
      for (std::size_t holder = 0; holder < n; ++holder) {
        done_to[holder] = plan->signal_counts[(holder * n + static_cast<std::size_t>(rank_)) *
                                                  static_cast<std::size_t>(plan->num_flags) +
                                              kDoneFlag];
      }
      PR_ASSIGN_OR_RETURN(const DeviceGuard on_device, DeviceGuard::enter(device_, rank_));
      PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&device.done_to), done_to.size() * sizeof(std::uint32_t)));
      PR_GPU_CHECK(rank_, hipMemcpy(device.done_to, done_to.data(), done_to.size() * sizeof(std::uint32_t),
                                    hipMemcpyHostToDevice));
      PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&device.steps),
                                    std::max<std::size_t>(1, steps.size()) * sizeof(DeviceStep)));
      PR_GPU_CHECK(rank_, hipMalloc(reinterpret_cast<void**>(&device.sources),
                                    std::max<std::size_t>(1, sources.size()) * sizeof(DeviceRef)));
      PR_GPU_CHECK(rank_,
                   hipMalloc(reinterpret_cast<void**>(&device.signal_counts), counts.size() * sizeof(std::uint32_t)));
      if (!steps.empty())
        PR_GPU_CHECK(rank_,
                     hipMemcpy(device.steps, steps.data(), steps.size() * sizeof(DeviceStep), hipMemcpyHostToDevice));
      if (!sources.empty())
        PR_GPU_CHECK(rank_, hipMemcpy(device.sources, sources.data(), sources.size() * sizeof(DeviceRef),
                                      hipMemcpyHostToDevice));
      PR_GPU_CHECK(rank_, hipMemcpy(device.signal_counts, counts.data(), counts.size() * sizeof(std::uint32_t),
                                    hipMemcpyHostToDevice));
      device.num_steps = static_cast<std::uint32_t>(steps.size());
      if (staged_world_) device.staged_chunks = stagedChunkAccesses(*plan, rank_, host_placed_);
      device.engine_parts = scheduleCopyEngineProgram(program, rank_);
      keep_alive_.push_back(plan);
      it = plans_.emplace(plan.get(), device).first;
    }
    *out = &it->second;
    return Status::ok();
  }

  void destroyMarks() {
    for (hipEvent_t e : marks_) {
      if (e != nullptr) (void)hipEventDestroy(e);
    }
    marks_.clear();
    marked_.clear();
  }

  void release() {
    destroyMarks();
    if (region_ == nullptr) return;
    const DeviceGuard on_device = DeviceGuard::enterQuietly(device_);
    (void)hipDeviceSynchronize();
    engines_.release();
    order_.release();
    for (auto& [key, plan] : plans_) {
      (void)hipFree(plan.steps);
      (void)hipFree(plan.sources);
      (void)hipFree(plan.signal_counts);
      (void)hipFree(plan.done_to);
    }
    plans_.clear();
    keep_alive_.clear();
    for (void* p : opened_) (void)hipIpcCloseMemHandle(p);
    opened_.clear();
    for (auto& [key, p] : opened_buffers_) (void)hipIpcCloseMemHandle(p);
    opened_buffers_.clear();
    for (SharedHostSegment& segment : peer_segments_) unregisterHostPages(segment.data(), segment.size());
    peer_segments_.clear();  // unmapped
    (void)hipFree(peer_table_);
    (void)hipFree(control_);
    (void)hipHostFree(abort_word_);
    (void)hipHostFree(error_);
    // Nulled: after a fallback to host staging the region opens again, and a failure halfway through must
    // not free these a second time.
    peer_table_ = nullptr;
    control_ = nullptr;
    abort_word_ = nullptr;
    error_ = nullptr;
    if (placement_ == RegionPlacement::kDevice) (void)hipFree(region_);
    (void)hipFree(private_scratch_);
    private_scratch_ = nullptr;
    host_block_.reset();  // back to the pool (freed there once its name is gone)
    placement_ = RegionPlacement::kDevice;
    region_ = nullptr;
  }

  int rank_;
  int world_size_;
  int device_;
  int multiprocessors_;
  int max_blocks_;
  std::uint64_t bytes_per_block_;
  KernelPolicy kernels_;
  std::uint64_t line_bytes_per_block_;
  std::size_t line_area_bytes_;  // one channel's receive lines
  int agreed_blocks_ = 1;
  bool shares_device_ = false;  // another rank of this process uses this device (device_sharing.h)
  bool connected_ = false;
  std::uint64_t timeout_ns_ = static_cast<std::uint64_t>(kDefaultTimeoutMs) * 1000000ull;
  std::size_t region_bytes_ = 0;
  unsigned char* region_ = nullptr;  // the device's address of the region (device memory or mapped host memory)
  // Host staging (gpu/host_staging.h): the configuration's forced pairs, the communicator's pool, this
  // rank's host-placed region, peers' regions of other processes mapped here, where every rank's region
  // lives and which peers this rank reaches through host memory.
  std::vector<std::uint8_t> forced_;
  std::shared_ptr<PinnedHostPool> pool_;
  RegionPlacement placement_ = RegionPlacement::kDevice;
  PinnedBlock host_block_;
  std::vector<SharedHostSegment> peer_segments_;
  std::vector<bool> host_placed_;
  std::vector<bool> host_link_;       // the pair is host-staged: forced, or no peer access
  std::vector<bool> no_peer_access_;  // the runtime refuses peer access between the pair's devices
  bool staged_world_ = false;
  std::vector<std::uint8_t> probe_faults_;           // PEERREDUCE_GPU_FAULT_PROBE_PAIRS (gpu/probe_fault.h)
  std::vector<int> failed_probes_;                   // peers whose probe failed in the last connectPeers
  std::map<std::uintptr_t, std::uint64_t> exports_;  // registered allocations: base -> export id
  std::uint64_t next_export_id_ = 1;
  std::map<std::pair<int, std::uint64_t>, void*> opened_buffers_;  // (peer, export id) -> mapping
  ControlBlock* control_ = nullptr;
  PeerTable* peer_table_ = nullptr;
  std::uint32_t* abort_word_ = nullptr;
  std::uint32_t* abort_word_device_ = nullptr;
  // A stop word adopted from the communicator's operation log (StopWordAdoption), read by the kernels in
  // place of abort_word_; null when none.
  std::shared_ptr<void> stop_owner_;
  std::uint32_t* stop_word_ = nullptr;
  std::uint32_t* stop_word_device_ = nullptr;
  void* stop_page_ = nullptr;
  ErrorReport* error_ = nullptr;
  ErrorReport* error_device_ = nullptr;
  std::vector<void*> opened_;
  std::vector<hipEvent_t> marks_;  // profiler time marks
  std::vector<bool> marked_;       // recorded on a stream (not skipped for capture)
  Topology topology_;
  std::map<const Plan*, DevicePlan> plans_;
  std::vector<std::shared_ptr<const Plan>> keep_alive_;
  CopyEngineLauncher engines_;                 // side streams and events of copy-engine copies, per channel
  ChannelOrderGpu order_;                      // each channel's operations in their order of call across streams
  BufferPlacement buffers_;                    // user buffers are this device's memory
  std::vector<unsigned char*> scratch_bases_;  // every rank's scratch as mapped here (the copies' addresses)
  // Device memory for plans' private slots where the region is host memory; null where it is device
  // memory (private slots are then the region's own).
  unsigned char* private_scratch_ = nullptr;
};

}  // namespace
}  // namespace gpu

StatusOr<int> resolveGpuDevice(int requested, int local_rank, int rank) {
  int devices = 0;
  PR_GPU_CHECK(rank, hipGetDeviceCount(&devices));
  if (devices < 1) return unavailableError("rank " + std::to_string(rank) + ": no GPU is visible");
  if (requested == kDeviceCurrent) {
    int current = 0;
    PR_GPU_CHECK(rank, hipGetDevice(&current));
    return current;
  }
  if (requested == kDeviceOfLocalRank) return std::max(local_rank, 0) % devices;
  if (requested < 0 || requested >= devices) {
    return invalidArgumentError("rank " + std::to_string(rank) + ": device " + std::to_string(requested) +
                                " (PEERREDUCE_DEVICE or prConfig_t.device) but " + std::to_string(devices) +
                                " are visible; name one of 0.." + std::to_string(devices - 1) + ", " +
                                std::to_string(kDeviceCurrent) + " (the current device) or " +
                                std::to_string(kDeviceOfLocalRank) + " (by local rank)");
  }
  return requested;
}

StatusOr<std::shared_ptr<Transport>> createGpuTransport(int rank, int world_size, const GpuTransportOptions& options) {
  if (world_size < 1 || world_size > kMaxWorldSize || rank < 0 || rank >= world_size) {
    return invalidArgumentError("GPU transport for rank " + std::to_string(rank) + " of " + std::to_string(world_size));
  }
  int devices = 0;
  PR_GPU_CHECK(rank, hipGetDeviceCount(&devices));
  if (devices < 1) return unavailableError("rank " + std::to_string(rank) + ": no GPU is visible");
  const int local = options.local_rank >= 0 ? options.local_rank : rank;
  const int device = options.device >= 0 ? options.device : local % devices;
  if (device >= devices) {
    return invalidArgumentError("rank " + std::to_string(rank) + ": device " + std::to_string(device) + " but only " +
                                std::to_string(devices) + " are visible");
  }
  int sms = 0;
  PR_GPU_CHECK(rank, hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device));
  // The ranks agree on the smallest cap; the fused pulling kernels take at most
  // PEERREDUCE_GPU_PULL_MAX_BLOCKS of it (by default kDefaultMaxBlocks), the interpreter
  // PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS of it (by default all), the push and line kernels all of it.
  PR_ASSIGN_OR_RETURN(
      const gpu::GpuSettings settings,
      gpu::gpuSettingsFromEnvironment([](const char* name) -> const char* { return std::getenv(name); }));
  int max_blocks = std::min(options.max_blocks > 0 ? std::min(options.max_blocks, sms) : sms, gpu::kMaxBlocks);
  // The device for creation only: the caller's thread gets its own back (device_guard.h).
  PR_ASSIGN_OR_RETURN(const gpu::DeviceGuard on_device, gpu::DeviceGuard::enter(device, rank));
  // Every kernel loaded before any runs: a kernel loaded at its first launch may wait for the kernels
  // running in this context, and a peer rank's kernel among them may be waiting for it (loadKernel).
  PR_GPU_CHECK(rank, gpu::loadKernels());
  gpu::KernelPolicy kernels = settings.kernels;
  const int ptx_version = gpu::kernelsPtxVersion();
  kernels.overlap_launch = gpu::launchesMayOverlap(settings.kernels.overlap_launch, ptx_version);
  if (settings.kernels.overlap_launch && !kernels.overlap_launch) {
    PR_INFO(rank,
            "launches do not overlap: the kernels running on device %d come from PTX version %d (%d or later "
            "has the grid-dependency wait); build for this GPU (CMAKE_CUDA_ARCHITECTURES)",
            device, ptx_version, kGridDependencyPtxVersion);
  }
  if (settings.max_blocks > 0) max_blocks = settings.max_blocks;
  PR_ASSIGN_OR_RETURN(std::vector<std::uint8_t> probe_faults,
                      gpu::parseProbeFaultPairs(settings.probe_fault_pairs, world_size));
  return std::shared_ptr<Transport>(
      std::make_shared<gpu::GpuTransport>(rank, world_size, device, sms, max_blocks, settings.bytes_per_block, kernels,
                                          settings.line_bytes_per_block, std::move(probe_faults)));
}

const char* gpuPlatformName() { return PR_GPU_PLATFORM_NAME; }

}  // namespace peerreduce
