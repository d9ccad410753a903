#include "rank_threads.h"

#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace peerreduce::sim {
namespace {

// One helper thread: waits for a task, runs it, reports completion through the pool's counter.
class Helper {
 public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  // Starts task(rank); `done` is called on the helper thread when it returns.
  void start(const std::function<void(int)>* task, int rank, std::function<void()> done) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = task;
      rank_ = rank;
      done_ = std::move(done);
    }
    wake_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || task_ != nullptr; });
      if (stop_) return;
      const std::function<void(int)>* task = task_;
      const int rank = rank_;
      std::function<void()> done = std::move(done_);
      task_ = nullptr;
      lock.unlock();
      (*task)(rank);
      done();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void(int)>* task_ = nullptr;
  int rank_ = 0;
  std::function<void()> done_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace

void runOnRankThreads(int ranks, const std::function<void(int)>& task) {
  thread_local std::vector<std::unique_ptr<Helper>> helpers;
  thread_local pid_t owner = ::getpid();
  if (owner != ::getpid()) {
    // A forked child: the helpers' threads stayed in the parent. Their objects are abandoned (joining
    // a thread that does not exist here would never return) and new helpers are started.
    for (auto& h : helpers) (void)h.release();
    helpers.clear();
    owner = ::getpid();
  }
  while (static_cast<int>(helpers.size()) < ranks - 1) helpers.push_back(std::make_unique<Helper>());
  std::mutex mutex;
  std::condition_variable all_done;
  int pending = ranks - 1;
  for (int r = 1; r < ranks; ++r) {
    helpers[static_cast<std::size_t>(r - 1)]->start(&task, r, [&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (--pending == 0) all_done.notify_one();
    });
  }
  task(0);
  std::unique_lock<std::mutex> lock(mutex);
  all_done.wait(lock, [&] { return pending == 0; });
}

}  // namespace peerreduce::sim
