// readTextFile: what a user names as a topology file or tuning table is read only when it is a regular
// file of bounded size; a named pipe (which would block a read forever), a directory or a missing path
// is a typed error naming it, returned at once.
#include "util/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace peerreduce {
namespace {

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/peerreduce-text-file-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::remove((dir_ + "/fifo").c_str());
    std::remove((dir_ + "/file").c_str());
    ::rmdir(dir_.c_str());
  }
  std::string write(const std::string& text) {
    const std::string path = dir_ + "/file";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

void expectRefused(const StatusOr<std::string>& read, const std::string& part) {
  ASSERT_FALSE(read.isOk());
  EXPECT_EQ(read.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find(part), std::string::npos) << read.status().toString();
}

TEST_F(TextFile, ARegularFileIsReadWhole) {
  const auto read = readTextFile(write("ranks 4\n"), 100, "topology file");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(*read, "ranks 4\n");
}

TEST_F(TextFile, ANamedPipeIsRefusedAtOnceWithoutReading) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto read = readTextFile(fifo, 100, "topology file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  expectRefused(read, "topology file '" + fifo + "' is a named pipe; name a regular file");
}

TEST_F(TextFile, ADirectoryAMissingPathAndAnOversizedFileAreRefusedByName) {
  expectRefused(readTextFile(dir_, 100, "tuning table", "(PEERREDUCE_TUNING_FILE)"),
                "tuning table '" + dir_ + "' (PEERREDUCE_TUNING_FILE) is a directory");
  expectRefused(readTextFile(dir_ + "/absent", 100, "topology file"), "cannot open topology file");
  expectRefused(readTextFile(write(std::string(101, 'x')), 100, "topology file"), "holds 101 bytes; at most 100");
}

}  // namespace
}  // namespace peerreduce
