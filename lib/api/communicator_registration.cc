// Communicator: collective registration of user buffers, and the pinned-pool and registration stats.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "api/communicator_impl.h"
#include "bootstrap/rank_agreement.h"
#include "peerreduce/communicator.h"

namespace peerreduce {
namespace {

// One rank's contribution to a registration: fixed size, so the bootstrap gathers equal blocks.
struct RegistrationBlock {
  std::uint32_t ok = 0;      // 1 when this rank registered its buffer
  std::uint32_t length = 0;  // of record
  std::uint64_t offset = 0;  // of the buffer in its allocation
  std::uint64_t bytes = 0;   // of the buffer
  std::byte record[kMaxPeerRecordBytes] = {};
};

// Every rank learns whether every rank succeeded; the first failing rank is named. A rank that failed
// returns its own error.
Status agreeAll(Communicator::Impl& impl, const Status& local, const std::string& what) {
  return RankAgreement(*impl.bootstrap, impl.config.bootstrapTimeout()).outcome(local, what);
}

// Opens every peer's buffer from the gathered blocks (all of which say ok). Each record is checked here
// (length) and by the transport (what it names, the range).
Status openPeers(Communicator::Impl& impl, const std::vector<RegistrationBlock>& all,
                 detail::RegisteredBufferState& state) {
  BufferSharing* capability = impl.transport->capabilities().buffer_sharing;
  if (capability == nullptr) {  // registerLocal succeeded, so the transport had it: a decorator dropped it
    return internalError(impl.transport->name() + " lost its buffer-sharing capability during a registration");
  }
  BufferSharing& sharing = *capability;
  for (int r = 0; r < impl.size; ++r) {
    const RegistrationBlock& block = all[static_cast<std::size_t>(r)];
    if (block.length == 0 || block.length > kMaxPeerRecordBytes) {
      return corruptError("rank " + std::to_string(r) + " sent a buffer record of " + std::to_string(block.length) +
                          " bytes (accepted 1.." + std::to_string(kMaxPeerRecordBytes) + ")");
    }
    if (r == impl.rank) continue;
    const std::vector<std::byte> record(block.record, block.record + block.length);
    auto view = sharing.openPeerBuffer(r, record, static_cast<std::size_t>(block.offset),
                                       static_cast<std::size_t>(block.bytes));
    if (!view.isOk()) {
      return view.status().withContext("rank " + std::to_string(impl.rank) + " opening rank " + std::to_string(r) +
                                       "'s registered buffer");
    }
    if (view->peer != r || view->data == nullptr || view->bytes != block.bytes) {
      return internalError(impl.transport->name() + " opened a view of rank " + std::to_string(view->peer) + " with " +
                           std::to_string(view->bytes) + " bytes for rank " + std::to_string(r) + "'s buffer of " +
                           std::to_string(block.bytes) + " bytes");
    }
    state.peers[static_cast<std::size_t>(r)] = *view;
  }
  return Status::ok();
}

}  // namespace

StatusOr<RegisteredBuffer> Communicator::registerBuffer(const void* ptr, std::size_t bytes) {
  Impl& impl = *impl_;
  if (aborted()) {
    return abortedError("rank " + std::to_string(impl.rank) +
                        ": registerBuffer on a communicator that was aborted; destroy it and create a new one");
  }
  auto reg = impl.buffers.registerLocal(impl.transport, impl.rank, ptr, bytes);
  // Drops this call's reference to the export when the registration as a whole fails.
  const auto undo = [&] {
    if (reg.isOk()) impl.buffers.releaseLocal(ptr);
  };
  RegistrationBlock mine;
  if (reg.isOk() && !reg->handle_record.empty() && reg->handle_record.size() <= kMaxPeerRecordBytes) {
    mine.ok = 1;
    mine.length = static_cast<std::uint32_t>(reg->handle_record.size());
    mine.offset = reg->offset;
    mine.bytes = reg->bytes;
    std::memcpy(mine.record, reg->handle_record.data(), reg->handle_record.size());
  }
  const StatusOr<std::vector<RegistrationBlock>> gathered =
      RankAgreement(*impl.bootstrap, impl.config.bootstrapTimeout()).gather(mine);
  if (!gathered.isOk()) {
    undo();
    return gathered.status().withContext("rank " + std::to_string(impl.rank) + " exchanging buffer registrations");
  }
  const std::vector<RegistrationBlock>& all = *gathered;
  if (!reg.isOk()) return reg.status().withContext("registerBuffer on rank " + std::to_string(impl.rank));
  // Every rank sees the same blocks, so every rank stops here together.
  for (int r = 0; r < impl.size; ++r) {
    if (all[static_cast<std::size_t>(r)].ok != 1) {
      undo();
      return unavailableError("registerBuffer: rank " + std::to_string(r) +
                              " could not register its buffer; see its error");
    }
  }
  auto state = std::make_shared<detail::RegisteredBufferState>();
  state->owner = &impl;
  state->data = ptr;
  state->bytes = bytes;
  state->allocation_base = reinterpret_cast<const void*>(reg->allocation.base);
  state->allocation_bytes = reg->allocation.bytes;
  state->offset = reg->offset;
  state->peers.resize(static_cast<std::size_t>(impl.size));
  // This rank's own entry: peers may write into it, hence not const.
  state->peers[static_cast<std::size_t>(impl.rank)] =
      PeerBufferView{impl.rank, static_cast<std::byte*>(const_cast<void*>(ptr)), bytes};
  const Status agreed = agreeAll(impl, openPeers(impl, all, *state), "open its peers' registered buffers");
  if (!agreed.isOk()) {
    undo();
    return agreed;
  }
  impl.buffers.add(state);
  return RegisteredBuffer(std::move(state));
}

Status Communicator::deregisterBuffer(const RegisteredBuffer& buffer) {
  Impl& impl = *impl_;
  Status local = Status::ok();
  if (!buffer.state_ || buffer.state_->owner != &impl || !impl.buffers.holds(buffer.state_.get())) {
    local = invalidArgumentError("deregisterBuffer on rank " + std::to_string(impl.rank) +
                                 ": the handle is not a live registration of this communicator (empty, "
                                 "deregistered already, or from another communicator)");
  }
  // Nobody ends an export before every rank agreed to: a rank refusing leaves every registration intact.
  PR_RETURN_IF_ERROR(agreeAll(impl, local, "deregister its buffer"));
  return impl.buffers.remove(buffer.state_);
}

RegistrationStats Communicator::registrationStats() const { return impl_->buffers.stats(); }

PinnedStats Communicator::pinnedStats() const { return impl_->pinned ? impl_->pinned->stats() : PinnedStats{}; }

}  // namespace peerreduce
