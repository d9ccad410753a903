#include "memory/shared_host_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>

namespace peerreduce {
namespace {

constexpr char kNamePrefix[] = "/peerreduce-";
// A fresh name collides only with a segment some other process made with our pid and sequence (a
// process of a previous boot's pid namespace that was killed early); a few salts settle it.
constexpr int kCreateAttempts = 8;

std::atomic<std::uint64_t> next_sequence{1};

std::size_t pageBytes() {
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : std::size_t{4096};
}

std::string errnoText(int err) { return "errno " + std::to_string(err); }

// Where POSIX shared memory lives on Linux (a tmpfs); its free bytes, when the system says.
constexpr char kSharedMemoryDirectory[] = "/dev/shm";

std::optional<std::size_t> sharedMemoryFreeBytes() {
  struct statvfs info {};
  if (::statvfs(kSharedMemoryDirectory, &info) != 0) return std::nullopt;
  return static_cast<std::size_t>(info.f_bavail) * static_cast<std::size_t>(info.f_frsize);
}

std::string mebibytes(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

std::string freshName(int attempt) {
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::uint64_t salt = (now * 0x9e3779b97f4a7c15ull) ^ (static_cast<std::uint64_t>(attempt) << 56);
  char text[kMaxSharedNameBytes];
  std::snprintf(text, sizeof(text), "%s%ld-%llu-%016llx", kNamePrefix, static_cast<long>(::getpid()),
                static_cast<unsigned long long>(next_sequence.fetch_add(1)), static_cast<unsigned long long>(salt));
  return text;
}

}  // namespace

bool SharedHostSegment::wellFormedName(const std::string& name) {
  const std::string prefix = kNamePrefix;
  if (name.size() <= prefix.size() || name.size() >= kMaxSharedNameBytes) return false;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  }
  return true;
}

StatusOr<SharedHostSegment> SharedHostSegment::create(std::size_t bytes) {
  if (bytes == 0) return invalidArgumentError("shared host segment of 0 bytes");
  const std::size_t page = pageBytes();
  if (bytes > static_cast<std::size_t>(INT64_MAX) - page) {
    return outOfMemoryError("shared host segment of " + std::to_string(bytes) + " bytes is larger than any file");
  }
  const std::size_t size = (bytes + page - 1) / page * page;
  std::string name;
  int fd = -1;
  for (int attempt = 0; attempt < kCreateAttempts && fd < 0; ++attempt) {
    name = freshName(attempt);
    fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno != EEXIST) {
      return unavailableError("cannot create shared host segment " + name + ": shm_open failed with " +
                              errnoText(errno) + " (is /dev/shm mounted and writable?)");
    }
  }
  if (fd < 0) {
    return unavailableError("cannot create a shared host segment: " + std::to_string(kCreateAttempts) +
                            " fresh names already existed (last " + name + ")");
  }
  // From here every failure closes the descriptor and removes the name it made.
  auto fail = [&](const std::string& what, int err) -> Status {
    ::close(fd);
    ::shm_unlink(name.c_str());
    return outOfMemoryError("shared host segment " + name + " of " + std::to_string(size) + " bytes: " + what +
                            " failed with " + errnoText(err) + "; /dev/shm may be too small (docker --shm-size)");
  };
  // A tmpfs sizes a file without its pages: a segment larger than /dev/shm's free space is created, then
  // kills the process with SIGBUS when its pages are first touched (a container's default /dev/shm is
  // 64 MiB). So the space is checked, then taken at once, and a shortage is an error naming the sizes.
  const auto shortage = [&](std::size_t free_bytes) -> Status {
    ::close(fd);
    ::shm_unlink(name.c_str());
    return outOfMemoryError("shared host segment " + name + " needs " + mebibytes(size) + " (" + std::to_string(size) +
                            " bytes) of " + kSharedMemoryDirectory + ", which has " + mebibytes(free_bytes) +
                            " free: each rank of host-staged links keeps its region there. Give it more (docker "
                            "run --shm-size, or remount " +
                            kSharedMemoryDirectory + " larger) or lower PEERREDUCE_POOL_BYTES");
  };
  const std::optional<std::size_t> free_bytes = sharedMemoryFreeBytes();
  if (free_bytes && *free_bytes < size) return shortage(*free_bytes);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return fail("ftruncate", errno);
  const int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (reserved == ENOSPC) return shortage(sharedMemoryFreeBytes().value_or(0));
  // Other answers (a file system without fallocate) leave the check above as the only one.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return fail("mmap", errno);
  ::close(fd);  // the mapping keeps the segment
  return SharedHostSegment(std::move(name), data, size, /*owner=*/true);
}

StatusOr<SharedHostSegment> SharedHostSegment::open(const std::string& name, std::size_t bytes) {
  if (!wellFormedName(name)) {
    return invalidArgumentError("shared host segment name '" + name + "' is not one peerreduce makes (" + kNamePrefix +
                                "<pid>-<sequence>-<salt>)");
  }
  if (bytes == 0) return invalidArgumentError("mapping shared host segment " + name + " of 0 bytes");
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    const int err = errno;
    return unavailableError("cannot map shared host segment " + name + ": shm_open failed with " + errnoText(err) +
                            (err == ENOENT ? " (it no longer exists: its owner exited or removed it before this rank "
                                             "mapped it)"
                                           : ""));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    ::close(fd);
    return unavailableError("cannot map shared host segment " + name + ": fstat failed with " + errnoText(err));
  }
  if (info.st_size < 0 || static_cast<std::uint64_t>(info.st_size) < bytes) {
    ::close(fd);
    return mismatchError("shared host segment " + name + " holds " + std::to_string(info.st_size) +
                         " bytes, the peer record promised " + std::to_string(bytes));
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (data == MAP_FAILED) {
    return outOfMemoryError("cannot map shared host segment " + name + " of " + std::to_string(size) +
                            " bytes: mmap failed with " + errnoText(err));
  }
  return SharedHostSegment(name, data, size, /*owner=*/false);
}

SharedHostSegment::SharedHostSegment(SharedHostSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::exchange(other.owner_, false)),
      linked_(std::exchange(other.linked_, false)) {}

SharedHostSegment& SharedHostSegment::operator=(SharedHostSegment&& other) noexcept {
  if (this != &other) {
    close();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

SharedHostSegment::~SharedHostSegment() { close(); }

void SharedHostSegment::close() {
  if (owner_ && linked_) (void)unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

Status SharedHostSegment::unlink() {
  if (!owner_ || !linked_) return Status::ok();
  if (::shm_unlink(name_.c_str()) != 0 && errno != ENOENT) {
    return internalError("cannot remove shared host segment " + name_ + ": shm_unlink failed with " + errnoText(errno));
  }
  linked_ = false;
  return Status::ok();
}

}  // namespace peerreduce
