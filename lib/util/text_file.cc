#include "util/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace peerreduce {
namespace {

const char* kindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

StatusOr<std::string> readTextFile(const std::string& path, std::size_t max_bytes, std::string_view what,
                                   std::string_view hint) {
  const std::string named = std::string(what) + " '" + path + "'" + (hint.empty() ? "" : " " + std::string(hint));
  // Non-blocking, so that opening a named pipe with no writer returns at once; the type is then
  // checked on the opened file itself (no window between a check and the open).
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return invalidArgumentError("cannot open " + named);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0)
    return invalidArgumentError("cannot inspect " + named + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    return invalidArgumentError(named + " is " + kindOf(info.st_mode) + "; name a regular file");
  }
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) {
    return invalidArgumentError(named + " holds " + std::to_string(info.st_size) + " bytes; at most " +
                                std::to_string(max_bytes) + " are accepted");
  }
  std::string text(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t done = 0;
  // Bounded: at most max_bytes + 1 bytes in total, each read making progress or ending the loop.
  while (done < text.size()) {
    const ssize_t got = ::read(file.fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return invalidArgumentError("cannot read " + named + ": " + std::strerror(errno));
    if (got == 0) break;  // shorter than when it was inspected
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  char extra = 0;
  if (::read(file.fd, &extra, 1) > 0) {
    return invalidArgumentError(named + " grew while it was read; at most " + std::to_string(max_bytes) +
                                " bytes are accepted");
  }
  return text;
}

}  // namespace peerreduce
