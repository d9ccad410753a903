// Sets (or unsets) an environment variable for one scope and restores what was there, so a test's
// PEERREDUCE_* values neither leak into other tests nor depend on the environment CI runs in.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace peerreduce::testing {

class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name.c_str())) old_ = old;
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace peerreduce::testing
