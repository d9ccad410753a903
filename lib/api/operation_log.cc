#include "api/operation_log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace peerreduce {
namespace {

constexpr std::uint32_t kLogMagic = 0x50524f4c;  // "PROL"
constexpr std::uint64_t kBusy = ~0ull;           // an entry being written
constexpr std::uint32_t kReportWriting = 1;      // a report claimed, its fields not yet written
constexpr std::uint32_t kReportReady = 2;

// A descriptor as four words (an entry's fields, a report's descriptors).
struct Words {
  std::uint64_t w[4];
};

Words pack(const OperationDescriptor& d) {
  Words out{};
  out.w[0] = static_cast<std::uint64_t>(d.collective) | (static_cast<std::uint64_t>(d.dtype) << 8) |
             (static_cast<std::uint64_t>(d.op) << 16) |
             (static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.root)) << 32);
  out.w[1] = d.count;
  out.w[2] = d.items;
  out.w[3] = d.items_hash;
  return out;
}

OperationDescriptor unpack(const Words& in) {
  OperationDescriptor d;
  d.collective = static_cast<Collective>(in.w[0] & 0xff);
  d.dtype = static_cast<DataType>((in.w[0] >> 8) & 0xff);
  d.op = static_cast<ReduceOp>((in.w[0] >> 16) & 0xff);
  d.root = static_cast<int>(static_cast<std::uint32_t>(in.w[0] >> 32));
  d.count = in.w[1];
  d.items = in.w[2];
  d.items_hash = in.w[3];
  return d;
}

// One rank's operation k (a cache line). `number` is k + 1 once published, 0 before any, kBusy while
// written.
struct Entry {
  std::uint64_t number;
  Words fields;
  std::uint64_t unused[3];
};
static_assert(sizeof(Entry) == 64);

struct Report {
  std::uint32_t state;  // 0, kReportWriting, kReportReady
  std::int32_t reporter;
  std::int32_t peer;
  std::uint32_t unused;
  std::uint64_t operation;
  Words reporter_descriptor;
  Words peer_descriptor;
};

struct Header {
  std::uint32_t magic;
  std::uint32_t world_size;
  Report report;
};

// Every shared field is reached through atomic_ref: other processes write it at any time.
template <typename T>
std::atomic_ref<T> shared(T& field) {
  return std::atomic_ref<T>(field);
}

Header& headerOf(void* data) { return *static_cast<Header*>(data); }

// The segment: the header, the entries, then a page per rank holding its stop word (a device registers
// the page of its own rank's word, and ranks of one process must not register one page twice).
std::size_t entriesOffset() { return ((sizeof(Header) + 63) / 64) * 64; }

std::size_t pageBytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

std::size_t stopWordsOffset(int world_size) {
  const std::size_t end =
      entriesOffset() + static_cast<std::size_t>(world_size) * OperationLog::kEntries * sizeof(Entry);
  return (end + pageBytes() - 1) / pageBytes() * pageBytes();
}

Entry& entryOf(void* data, int rank, std::uint64_t operation) {
  auto* entries = reinterpret_cast<Entry*>(static_cast<unsigned char*>(data) + entriesOffset());
  return entries[static_cast<std::uint64_t>(rank) * OperationLog::kEntries + operation % OperationLog::kEntries];
}

// Entries use sequentially consistent accesses throughout (no standalone fences: ThreadSanitizer does
// not model them): one total order of every entry access is what makes both the seqlock reads and the
// "both write before they read" argument hold. A report's fields are published by its state (release).
Words readWords(Words& source, std::memory_order order) {
  Words out{};
  for (int i = 0; i < 4; ++i) out.w[i] = shared(source.w[i]).load(order);
  return out;
}

void writeWords(Words& target, const Words& value, std::memory_order order) {
  for (int i = 0; i < 4; ++i) shared(target.w[i]).store(value.w[i], order);
}

Status mismatchOf(std::uint64_t operation, int reporter, const OperationDescriptor& mine, int peer,
                  const OperationDescriptor& theirs) {
  return mismatchError("operation " + std::to_string(operation) + " of the communicator differs between ranks: rank " +
                       std::to_string(reporter) + " called " + mine.describe() + ", rank " + std::to_string(peer) +
                       " called " + theirs.describe() +
                       "; every rank must call the same collectives in the same order with the same count, type, op "
                       "and root (the communicators are out of step now: destroy and create them again)");
}

}  // namespace

std::string OperationDescriptor::describe() const {
  std::string out;
  if (items > 0) out = "a batch of " + std::to_string(items) + " ";
  out += std::string(collectiveName(collective)) + (items > 0 ? "s, " : " of ") + std::to_string(count) + " " +
         std::string(dataTypeName(dtype));
  if (collective == Collective::kBroadcast) {
    out += " from rank " + std::to_string(root);
  } else if (collective != Collective::kAllGather) {
    out += " (" + std::string(reduceOpName(op)) + ")";
  }
  return out;
}

std::size_t OperationLog::segmentBytes(int world_size) {
  return stopWordsOffset(world_size) + static_cast<std::size_t>(world_size) * pageBytes();
}

OperationLog::OperationLog(int rank, int world_size, SharedHostSegment segment)
    : rank_(rank), world_size_(world_size), segment_(std::make_shared<SharedHostSegment>(std::move(segment))) {}

std::uint32_t* OperationLog::stopWord(int rank) const {
  auto* base = static_cast<unsigned char*>(segment_->data()) + stopWordsOffset(world_size_);
  return reinterpret_cast<std::uint32_t*>(base + static_cast<std::size_t>(rank) * pageBytes());
}

void OperationLog::stopEveryRank() const {
  for (int r = 0; r < world_size_; ++r) shared(*stopWord(r)).store(1, std::memory_order_release);
}

StatusOr<std::unique_ptr<OperationLog>> OperationLog::create(int rank, int world_size) {
  if (world_size < 1 || world_size > kMaxWorldSize || rank < 0 || rank >= world_size) {
    return invalidArgumentError("operation log: rank " + std::to_string(rank) + " of a world of " +
                                std::to_string(world_size));
  }
  PR_ASSIGN_OR_RETURN(SharedHostSegment segment, SharedHostSegment::create(segmentBytes(world_size)));
  Header& header = headerOf(segment.data());
  shared(header.world_size).store(static_cast<std::uint32_t>(world_size), std::memory_order_relaxed);
  shared(header.magic).store(kLogMagic, std::memory_order_release);
  return std::unique_ptr<OperationLog>(new OperationLog(rank, world_size, std::move(segment)));
}

StatusOr<std::unique_ptr<OperationLog>> OperationLog::open(int rank, int world_size, const std::string& name) {
  if (world_size < 1 || world_size > kMaxWorldSize || rank < 0 || rank >= world_size) {
    return invalidArgumentError("operation log: rank " + std::to_string(rank) + " of a world of " +
                                std::to_string(world_size));
  }
  PR_ASSIGN_OR_RETURN(SharedHostSegment segment, SharedHostSegment::open(name, segmentBytes(world_size)));
  Header& header = headerOf(segment.data());
  const std::uint32_t magic = shared(header.magic).load(std::memory_order_acquire);
  const std::uint32_t world = shared(header.world_size).load(std::memory_order_relaxed);
  if (magic != kLogMagic || world != static_cast<std::uint32_t>(world_size)) {
    return mismatchError("operation log " + name + " is not a log of a world of " + std::to_string(world_size) +
                         " (magic " + std::to_string(magic) + ", world " + std::to_string(world) + ")");
  }
  return std::unique_ptr<OperationLog>(new OperationLog(rank, world_size, std::move(segment)));
}

Status OperationLog::unlink() { return segment_->owner() ? segment_->unlink() : Status::ok(); }

Status OperationLog::reported() const {
  Report& report = headerOf(segment_->data()).report;
  const std::uint32_t state = shared(report.state).load(std::memory_order_acquire);
  if (state == 0) return Status::ok();
  if (state != kReportReady) {
    return mismatchError(
        "another rank found that the ranks called different operations on this communicator "
        "(its error names them); destroy and create the communicators again");
  }
  return mismatchOf(shared(report.operation).load(std::memory_order_relaxed),
                    shared(report.reporter).load(std::memory_order_relaxed),
                    unpack(readWords(report.reporter_descriptor, std::memory_order_relaxed)),
                    shared(report.peer).load(std::memory_order_relaxed),
                    unpack(readWords(report.peer_descriptor, std::memory_order_relaxed)));
}

Status OperationLog::explain(const Status& failure) const {
  if (failure.isOk()) return failure;
  const Status mismatch = reported();
  return mismatch.isOk() ? failure : mismatch;
}

Status OperationLog::post(const OperationDescriptor& descriptor) {
  PR_RETURN_IF_ERROR(reported());
  void* data = segment_->data();
  const std::uint64_t operation = next_++;
  const Words mine = pack(descriptor);
  Entry& own = entryOf(data, rank_, operation);
  shared(own.number).store(kBusy);
  writeWords(own.fields, mine, std::memory_order_seq_cst);
  shared(own.number).store(operation + 1);
  // Both ranks of a disagreeing pair write before they read (one total order): one sees the other's entry.
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_) continue;
    Entry& theirs = entryOf(data, peer, operation);
    const std::uint64_t before = shared(theirs.number).load();
    if (before != operation + 1) continue;  // not there yet, or a whole ring ahead: not checked here
    const Words fields = readWords(theirs.fields, std::memory_order_seq_cst);
    if (shared(theirs.number).load() != before) continue;  // rewritten meanwhile
    if (fields.w[0] == mine.w[0] && fields.w[1] == mine.w[1] && fields.w[2] == mine.w[2] && fields.w[3] == mine.w[3]) {
      continue;
    }
    Report& report = headerOf(data).report;
    std::uint32_t empty = 0;
    if (shared(report.state).compare_exchange_strong(empty, kReportWriting, std::memory_order_acq_rel)) {
      shared(report.reporter).store(rank_, std::memory_order_relaxed);
      shared(report.peer).store(peer, std::memory_order_relaxed);
      shared(report.operation).store(operation, std::memory_order_relaxed);
      writeWords(report.reporter_descriptor, mine, std::memory_order_relaxed);
      writeWords(report.peer_descriptor, fields, std::memory_order_relaxed);
      shared(report.state).store(kReportReady, std::memory_order_release);
    }
    // The ranks that launched this operation wait for this one: end their waits now.
    stopEveryRank();
    return mismatchOf(operation, rank_, descriptor, peer, unpack(fields));
  }
  return Status::ok();
}

}  // namespace peerreduce
