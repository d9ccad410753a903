// Children's collectives as rounds of the parent's bootstrap (split_bootstrap.h has the protocol). Every
// parent rank sees the same headers in a round, so every decision drawn from them (whether payloads
// follow, whether everyone finished, whether a header is foreign) is the same on every rank, and the
// ranks stay in step whatever their children do.
#include "bootstrap/split_bootstrap.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace peerreduce {

struct SplitRounds::Header {
  std::uint32_t magic;
  std::uint32_t state;
  std::int32_t color;
  std::uint32_t sequence;
  std::uint64_t bytes;
};

namespace {

constexpr std::uint32_t kRoundMagic = 0x50525352;  // "PRSR": a split round's header
constexpr std::uint32_t kCarrying = 1;             // the rank is in a collective of its child
constexpr std::uint32_t kFinished = 2;             // the rank's child is made (or failed); it only answers

std::string parentRank(int r) { return "parent rank " + std::to_string(r); }

}  // namespace

SplitRounds::SplitRounds(std::shared_ptr<Bootstrap> parent, int color) : parent_(std::move(parent)), color_(color) {}

Status SplitRounds::round(const Header& mine, std::span<const std::byte> payload, std::vector<Header>& headers,
                          std::vector<std::byte>& payloads, std::uint64_t& width, std::chrono::milliseconds timeout) {
  if (!broken_.isOk()) return broken_;
  if (parent_ == nullptr) {
    return internalError("split bootstrap: a round after the split detached from its parent; please report it");
  }
  // Every rank counts the same rounds, so every rank stops at the same one.
  if (++rounds_ > kMaxSplitRounds) {
    broken_ = mismatchError("prCommSplit: creating the children took more than " + std::to_string(kMaxSplitRounds) +
                            " rounds of the parent's bootstrap; the ranks are not all creating children");
    return broken_;
  }
  const auto n = static_cast<std::size_t>(parent_->size());
  headers.assign(n, Header{});
  Status gathered = parent_->allGather(std::as_bytes(std::span<const Header>(&mine, 1)),
                                       std::as_writable_bytes(std::span<Header>(headers)), timeout);
  if (!gathered.isOk()) {
    broken_ = gathered;
    return broken_;
  }
  width = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const Header& other = headers[r];
    if (other.magic != kRoundMagic || (other.state != kCarrying && other.state != kFinished)) {
      broken_ = mismatchError("prCommSplit: " + parentRank(static_cast<int>(r)) +
                              " sent a block that is not a split round; it called another collective of the "
                              "parent's bootstrap while this rank was splitting");
      return broken_;
    }
    if (other.state == kCarrying) width = std::max(width, other.bytes);
  }
  if (width > kMaxSplitPayloadBytes) {
    broken_ =
        corruptError("prCommSplit: a split round announces " + std::to_string(width) + " bytes per rank (at most " +
                     std::to_string(kMaxSplitPayloadBytes) + "); a header is corrupt");
    return broken_;
  }
  payloads.clear();
  if (width == 0) return Status::ok();  // nobody carries a payload: no second collective, on every rank
  std::vector<std::byte> padded(static_cast<std::size_t>(width));
  std::copy(payload.begin(), payload.end(), padded.begin());
  payloads.resize(n * static_cast<std::size_t>(width));
  gathered = parent_->allGather(padded, payloads, timeout);
  if (!gathered.isOk()) broken_ = gathered;
  return gathered;
}

Status SplitRounds::childAllGather(std::span<const int> members, std::uint32_t sequence,
                                   std::span<const std::byte> mine, std::span<std::byte> all,
                                   std::chrono::milliseconds timeout) {
  std::vector<Header> headers;
  std::vector<std::byte> payloads;
  std::uint64_t width = 0;
  const Header header{kRoundMagic, kCarrying, color_, sequence, mine.size()};
  PR_RETURN_IF_ERROR(round(header, mine, headers, payloads, width, timeout));
  // The round happened whatever follows, so a refusal here leaves every rank in step.
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int m = members[i];
    const Header& other = headers[static_cast<std::size_t>(m)];
    const std::string who = "child rank " + std::to_string(i) + " (" + parentRank(m) + ")";
    if (other.state != kCarrying) {
      return unavailableError("prCommSplit: " + who + " left the creation of the child of color " +
                              std::to_string(color_) + " before its collective " + std::to_string(sequence) +
                              " (its creation failed or ended early); see that rank's error");
    }
    if (other.color != color_) {
      return mismatchError("prCommSplit: " + who + " is creating the child of color " + std::to_string(other.color) +
                           ", this rank the child of color " + std::to_string(color_) +
                           "; the ranks computed different splits");
    }
    if (other.sequence != sequence) {
      return mismatchError("prCommSplit: " + who + " is at collective " + std::to_string(other.sequence) +
                           " of the child of color " + std::to_string(color_) + ", this rank at " +
                           std::to_string(sequence));
    }
    if (other.bytes != mine.size()) {
      return mismatchError("bootstrap allGather: " + who + " sent " + std::to_string(other.bytes) +
                           " bytes but this rank sent " + std::to_string(mine.size()));
    }
  }
  if (all.size() != members.size() * mine.size()) {
    return invalidArgumentError("bootstrap allGather: output holds " + std::to_string(all.size()) + " bytes, " +
                                std::to_string(members.size() * mine.size()) + " needed (size x block)");
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto from = static_cast<std::size_t>(members[i]) * static_cast<std::size_t>(width);
    std::memcpy(all.data() + i * mine.size(), payloads.data() + from, mine.size());
  }
  return Status::ok();
}

Status SplitRounds::finish(std::chrono::milliseconds timeout) {
  std::vector<Header> headers;
  std::vector<std::byte> payloads;
  std::uint64_t width = 0;
  const Header header{kRoundMagic, kFinished, color_, 0, 0};
  for (int i = 0; i < kMaxSplitRounds; ++i) {
    PR_RETURN_IF_ERROR(round(header, {}, headers, payloads, width, timeout));
    if (std::all_of(headers.begin(), headers.end(), [](const Header& h) { return h.state == kFinished; })) {
      return Status::ok();
    }
  }
  return mismatchError("prCommSplit: the parent's ranks did not all finish within " + std::to_string(kMaxSplitRounds) +
                       " rounds");
}

SplitBootstrap::SplitBootstrap(std::shared_ptr<SplitRounds> rounds, std::vector<int> members, int rank)
    : rounds_(std::move(rounds)), members_(std::move(members)), rank_(rank) {}

Status SplitBootstrap::allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                                 std::chrono::milliseconds timeout) {
  if (rounds_ != nullptr) return rounds_->childAllGather(members_, sequence_++, mine, all, timeout);
  if (after_ != nullptr) return after_->allGather(mine, all, timeout);
  return unsupportedError("rank " + std::to_string(rank_) +
                          " of a communicator made by prCommSplit on GPUs: its bootstrap was carried over the "
                          "parent's during the split only, so collectives of the bootstrap after creation (buffer "
                          "registration) are not available; create the communicator with prCommInitRank over a "
                          "bootstrap of its own ranks to register buffers");
}

void SplitBootstrap::detach(std::shared_ptr<Bootstrap> after) {
  rounds_.reset();
  after_ = std::move(after);
}

}  // namespace peerreduce
