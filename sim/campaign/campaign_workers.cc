#include "campaign_workers.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

namespace peerreduce::sim::campaign {
namespace {

constexpr std::uint32_t kMaxProblemBytes = 1u << 16;

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  template <typename T>
  void put(T v) {
    // resize + memcpy rather than insert of a pointer range: GCC 12 at -O3 takes the inserted range for
    // an overflow of the empty vector (-Wstringop-overflow, a false positive) and -Werror stops the build.
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }

 private:
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  Reader(const std::vector<std::byte>& in, std::size_t offset) : in_(in), at_(offset) {}
  template <typename T>
  bool get(T* v) {
    if (in_.size() - at_ < sizeof(T)) return false;
    std::memcpy(v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool getString(std::string* s, std::uint32_t length) {
    if (length > kMaxProblemBytes || in_.size() - at_ < length) return false;
    s->assign(reinterpret_cast<const char*>(in_.data() + at_), length);
    at_ += length;
    return true;
  }
  std::size_t offset() const { return at_; }

 private:
  const std::vector<std::byte>& in_;
  std::size_t at_;
};

bool writeAll(int fd, const std::vector<std::byte>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The worker: runs its seeds, sends the results, exits without returning to the caller's stack.
[[noreturn]] void workerMain(int fd, std::uint64_t first_seed, std::uint64_t count, int jobs, int index,
                             const ScenarioOptions& options) {
  std::vector<std::byte> out;
  for (std::uint64_t i = static_cast<std::uint64_t>(index); i < count; i += static_cast<std::uint64_t>(jobs)) {
    const std::vector<std::byte> one = encodeResult(runScenario(drawScenario(first_seed + i), options));
    out.insert(out.end(), one.begin(), one.end());
  }
  const bool sent = writeAll(fd, out);
  ::close(fd);
  // exit (not _exit): coverage and sanitizer reports of the worker are written as for any process.
  std::exit(sent ? 0 : 3);
}

}  // namespace

std::vector<std::byte> encodeResult(const ScenarioResult& r) {
  std::vector<std::byte> out;
  Writer w(out);
  w.put(r.seed);
  w.put(static_cast<std::uint8_t>((r.safety_ok ? 1 : 0) | (r.liveness_ok ? 2 : 0)));
  w.put(r.ops_ok);
  w.put(r.ops_failed);
  w.put(r.creation_refusals);
  w.put(r.shrinks);
  for (const KindOutcome& k : r.kinds) {
    w.put(k.injected);
    w.put(k.ops_failed);
    w.put(k.recoveries);
    w.put(k.recovery_us);
    w.put(k.max_recovery_us);
  }
  for (int c : r.error_codes) w.put(c);
  w.put(r.buggify_fired);
  w.put(r.fingerprint);
  const auto length = static_cast<std::uint32_t>(std::min<std::size_t>(r.problem.size(), kMaxProblemBytes));
  w.put(length);
  const auto* p = reinterpret_cast<const std::byte*>(r.problem.data());
  out.insert(out.end(), p, p + length);
  return out;
}

bool decodeResult(const std::vector<std::byte>& bytes, std::size_t* offset, ScenarioResult* r) {
  Reader in(bytes, *offset);
  std::uint8_t flags = 0;
  std::uint32_t length = 0;
  bool ok = in.get(&r->seed) && in.get(&flags) && in.get(&r->ops_ok) && in.get(&r->ops_failed) &&
            in.get(&r->creation_refusals) && in.get(&r->shrinks);
  for (KindOutcome& k : r->kinds) {
    ok = ok && in.get(&k.injected) && in.get(&k.ops_failed) && in.get(&k.recoveries) && in.get(&k.recovery_us) &&
         in.get(&k.max_recovery_us);
  }
  for (int& c : r->error_codes) ok = ok && in.get(&c);
  ok = ok && in.get(&r->buggify_fired) && in.get(&r->fingerprint) && in.get(&length) &&
       in.getString(&r->problem, length);
  if (!ok || flags > 3) return false;
  r->safety_ok = (flags & 1) != 0;
  r->liveness_ok = (flags & 2) != 0;
  *offset = in.offset();
  return true;
}

StatusOr<std::vector<ScenarioResult>> runScenariosInWorkers(std::uint64_t first_seed, std::uint64_t count, int jobs,
                                                            const ScenarioOptions& options, double deadline_seconds) {
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::vector<std::byte> bytes;
    bool eof = false;
  };
  std::vector<Worker> workers(static_cast<std::size_t>(jobs));
  auto stopAll = [&] {
    for (Worker& w : workers) {
      if (w.fd >= 0) ::close(w.fd);
      if (w.pid > 0) {
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
      }
    }
  };
  std::fflush(nullptr);  // nothing buffered is written twice by the workers
  for (int j = 0; j < jobs; ++j) {
    int fds[2];
    if (::pipe(fds) != 0) {
      stopAll();
      return internalError("campaign: cannot make a pipe for worker " + std::to_string(j) + ": " +
                           std::strerror(errno));
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      for (int k = 0; k < j; ++k) ::close(workers[static_cast<std::size_t>(k)].fd);
      workerMain(fds[1], first_seed, count, jobs, j, options);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      stopAll();
      return internalError("campaign: cannot start worker " + std::to_string(j) + ": " + std::strerror(errno));
    }
    workers[static_cast<std::size_t>(j)].pid = pid;
    workers[static_cast<std::size_t>(j)].fd = fds[0];
  }
  // Drain every pipe until each worker closes it, within the deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_seconds);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> which;
    for (std::size_t j = 0; j < workers.size(); ++j) {
      if (!workers[j].eof) {
        fds.push_back({workers[j].fd, POLLIN, 0});
        which.push_back(j);
      }
    }
    if (fds.empty()) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stopAll();
      return internalError("campaign: workers did not finish seeds " + std::to_string(first_seed) + ".." +
                           std::to_string(first_seed + count - 1) + " within " + std::to_string(deadline_seconds) +
                           " s");
    }
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      stopAll();
      return internalError(std::string("campaign: poll failed: ") + std::strerror(errno));
    }
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = workers[which[k]];
      std::byte buf[1 << 16];
      const ssize_t n = ::read(w.fd, buf, sizeof(buf));
      if (n > 0) {
        w.bytes.insert(w.bytes.end(), buf, buf + n);
      } else if (n == 0 || errno != EINTR) {
        w.eof = true;
      }
    }
  }
  std::vector<ScenarioResult> results(count);
  std::string problem;
  for (std::size_t j = 0; j < workers.size(); ++j) {
    Worker& w = workers[j];
    ::close(w.fd);
    w.fd = -1;
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    w.pid = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      problem = "campaign: worker " + std::to_string(j) + " ended abnormally (" +
                (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                     : "exit status " + std::to_string(WEXITSTATUS(status))) +
                "); rerun its seeds with --jobs 1 to see why";
      continue;
    }
    std::size_t offset = 0;
    for (std::uint64_t i = j; i < count; i += static_cast<std::uint64_t>(jobs)) {
      if (!decodeResult(w.bytes, &offset, &results[i]) || results[i].seed != first_seed + i) {
        problem = "campaign: worker " + std::to_string(j) + " sent a malformed result for seed " +
                  std::to_string(first_seed + i);
        break;
      }
    }
    if (problem.empty() && offset != w.bytes.size()) {
      problem = "campaign: worker " + std::to_string(j) + " sent " + std::to_string(w.bytes.size() - offset) +
                " bytes more than its results";
    }
  }
  if (!problem.empty()) return internalError(problem);
  return results;
}

}  // namespace peerreduce::sim::campaign
