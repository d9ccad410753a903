#include "mpi/mpi_channel.h"

#include <chrono>
#include <cstring>
#include <string>

#include "mpi/mpi_environment.h"

namespace peerreduce::mpi {
namespace {

// How long the destructor lets unfinished sends complete before it gives up on them.
constexpr auto kCloseGrace = std::chrono::milliseconds(200);

}  // namespace

MpiChannel::MpiChannel(MPI_Comm comm, int rank, int world_size) : comm_(comm), rank_(rank), world_size_(world_size) {}

MpiChannel::~MpiChannel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (control_request_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&control_request_);
    MPI_Wait(&control_request_, MPI_STATUS_IGNORE);  // a cancelled receive completes locally
  }
  const auto give_up = std::chrono::steady_clock::now() + kCloseGrace;
  while (!sends_.empty() && completeSends().isOk() && std::chrono::steady_clock::now() < give_up) {
  }
  bool abandoned = false;
  for (PendingSend& pending : sends_) {
    // A peer that stopped receiving never matches these: MPI keeps the request, and the bytes must stay
    // valid as long as it might read them, so they are left allocated.
    MPI_Request_free(&pending.request);
    new std::vector<std::byte>(std::move(pending.bytes));
    abandoned = true;
  }
  if (!failed_ && !abandoned) MPI_Comm_free(&comm_);
}

Status MpiChannel::check(int rc, const char* call, int peer) {
  if (rc == MPI_SUCCESS) return Status::ok();
  failed_ = true;
  std::string who = "MPI transport machine " + std::to_string(rank_) + " of " + std::to_string(world_size_);
  if (peer >= 0) who += ", peer machine " + std::to_string(peer);
  return unavailableError(std::string(call) + " failed (" + who + "): " + mpiErrorText(rc));
}

Status MpiChannel::postControlReceive() {
  return check(
      MPI_Irecv(&control_in_, sizeof(ControlMessage), MPI_BYTE, MPI_ANY_SOURCE, kControlTag, comm_, &control_request_),
      "MPI_Irecv", -1);
}

Status MpiChannel::start() {
  if (control_request_ != MPI_REQUEST_NULL) return Status::ok();
  return postControlReceive();
}

Status MpiChannel::send(int peer, int tag, std::vector<std::byte> bytes) {
  PendingSend& pending = sends_.emplace_back();
  pending.bytes = std::move(bytes);
  const Status sent = check(MPI_Isend(pending.bytes.data(), static_cast<int>(pending.bytes.size()), MPI_BYTE, peer, tag,
                                      comm_, &pending.request),
                            "MPI_Isend", peer);
  if (!sent.isOk()) sends_.pop_back();
  return sent;
}

Status MpiChannel::sendControl(int peer, const ControlMessage& message) {
  std::vector<std::byte> bytes(sizeof(message));
  std::memcpy(bytes.data(), &message, sizeof(message));
  return send(peer, kControlTag, std::move(bytes));
}

Status MpiChannel::sendReply(int peer, const void* data, std::size_t bytes) {
  std::vector<std::byte> copy(bytes);
  std::memcpy(copy.data(), data, bytes);
  return send(peer, kReplyTag, std::move(copy));
}

Status MpiChannel::completeSends() {
  for (auto it = sends_.begin(); it != sends_.end();) {
    int done = 0;
    PR_RETURN_IF_ERROR(check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test", -1));
    it = done ? sends_.erase(it) : it + 1;
  }
  return Status::ok();
}

Status MpiChannel::postReply(int peer, void* dst, std::size_t bytes, PendingReply* reply) {
  reply->peer = peer;
  reply->bytes = bytes;
  return check(MPI_Irecv(dst, static_cast<int>(bytes), MPI_BYTE, peer, kReplyTag, comm_, &reply->request), "MPI_Irecv",
               peer);
}

StatusOr<bool> MpiChannel::testReply(PendingReply* reply) {
  if (reply->request == MPI_REQUEST_NULL) return true;
  int done = 0;
  MPI_Status status;
  PR_RETURN_IF_ERROR(check(MPI_Test(&reply->request, &done, &status), "MPI_Test", reply->peer));
  if (!done) return false;
  int received = 0;
  MPI_Get_count(&status, MPI_BYTE, &received);
  if (static_cast<std::size_t>(received) != reply->bytes) {
    return corruptError("MPI transport machine " + std::to_string(rank_) + ": machine " + std::to_string(reply->peer) +
                        " answered a read of " + std::to_string(reply->bytes) + " bytes with " +
                        std::to_string(received));
  }
  return true;
}

void MpiChannel::cancelReply(PendingReply* reply) {
  if (reply->request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&reply->request);
  MPI_Wait(&reply->request, MPI_STATUS_IGNORE);
}

}  // namespace peerreduce::mpi
