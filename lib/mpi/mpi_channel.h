// MpiChannel: the messages of one MpiTransport over its own MPI communicator (mpi/mpi_wire.h), and
// their progress.
//
// Nothing here blocks: sends are nonblocking (the channel keeps each message's bytes until MPI is done
// with them), receives are posted and tested. The transport's executor calls poll() in every wait, so
// one thread both runs its rank's plan and answers its peers' read requests; no progress thread is
// needed, and MPI never has to make progress on its own (Open MPI 4.1 does not, over TCP).
//
// Every MPI error is returned as kUnavailable naming the call, this machine and the peer (the
// communicator's error handler is MPI_ERRORS_RETURN).
//
// Thread safety: one thread at a time (the transport's executor); distinct channels on distinct
// communicators may be used from different threads under MPI_THREAD_MULTIPLE.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <deque>
#include <vector>

#include "mpi/mpi_wire.h"
#include "peerreduce/status.h"

namespace peerreduce::mpi {

// Most control messages one poll() hands over, so a flood of them cannot keep a wait from checking its
// deadline.
inline constexpr int kMaxMessagesPerPoll = 64;

class MpiChannel {
 public:
  // Takes ownership of `comm` (freed by the destructor when nothing of it is left pending).
  MpiChannel(MPI_Comm comm, int rank, int world_size);
  ~MpiChannel();
  MpiChannel(const MpiChannel&) = delete;
  MpiChannel& operator=(const MpiChannel&) = delete;

  MPI_Comm comm() const { return comm_; }

  // Posts the receive of control messages; called once the peers are connected.
  Status start();
  Status sendControl(int peer, const ControlMessage& message);
  // Sends a copy of `bytes` bytes at `data` as the reply to `peer`'s read.
  Status sendReply(int peer, const void* data, std::size_t bytes);

  // A read's reply, received into the reader's buffer.
  struct PendingReply {
    MPI_Request request = MPI_REQUEST_NULL;
    int peer = -1;
    std::size_t bytes = 0;
  };
  Status postReply(int peer, void* dst, std::size_t bytes, PendingReply* reply);
  // Whether the reply arrived (then its request is done); kCorrupt when it is not `bytes` long.
  StatusOr<bool> testReply(PendingReply* reply);
  // Withdraws a reply that will not be waited for (the operation failed).
  void cancelReply(PendingReply* reply);

  // Completes finished sends and hands each control message that arrived (at most kMaxMessagesPerPoll)
  // to handle(source, message, received_bytes), reposting the receive after each.
  template <typename Handle>
  Status poll(Handle&& handle) {
    PR_RETURN_IF_ERROR(completeSends());
    for (int n = 0; n < kMaxMessagesPerPoll && control_request_ != MPI_REQUEST_NULL; ++n) {
      int arrived = 0;
      MPI_Status status;
      PR_RETURN_IF_ERROR(check(MPI_Test(&control_request_, &arrived, &status), "MPI_Test", -1));
      if (!arrived) break;
      int received = 0;
      MPI_Get_count(&status, MPI_BYTE, &received);
      const ControlMessage message = control_in_;
      PR_RETURN_IF_ERROR(postControlReceive());
      PR_RETURN_IF_ERROR(handle(status.MPI_SOURCE, message, static_cast<std::size_t>(received)));
    }
    return Status::ok();
  }

 private:
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<std::byte> bytes;
  };
  Status postControlReceive();
  Status send(int peer, int tag, std::vector<std::byte> bytes);
  Status completeSends();
  Status check(int rc, const char* call, int peer);

  MPI_Comm comm_;
  int rank_;
  int world_size_;
  ControlMessage control_in_;
  MPI_Request control_request_ = MPI_REQUEST_NULL;
  std::deque<PendingSend> sends_;
  bool failed_ = false;  // an MPI call failed: the communicator is left alone at destruction
};

}  // namespace peerreduce::mpi
