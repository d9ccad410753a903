// Replays fuzz inputs without libFuzzer: main() feeds every regular file named on the command line,
// or found directly inside a directory named there, to LLVMFuzzerTestOneInput once. The normal (gcc)
// build links each fuzz target with this file so that ctest turns every corpus file into a
// regression test; a crash or sanitizer report fails the test, and the file name is printed first so
// the failing input is known.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// Corpus files are small; anything larger is a mistake in the corpus, not an input to replay.
constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{4} << 20;

bool replayFile(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  if (error || bytes > kMaxInputBytes) {
    std::fprintf(stderr, "replay: cannot use %s (%s)\n", path.c_str(), error ? error.message().c_str() : "too large");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), data.size());
  std::vector<std::uint8_t> bytes_copy(data.begin(), data.end());  // exact size, so ASan sees overreads
  LLVMFuzzerTestOneInput(bytes_copy.data(), bytes_copy.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus dir or file>...\n", argv[0]);
    return 2;
  }
  std::size_t replayed = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());  // a stable order makes failures reproducible
    } else {
      files.push_back(arg);
    }
    for (const auto& file : files) {
      ok = replayFile(file) && ok;
      ++replayed;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs\n", replayed);
  // An empty corpus would make the regression test pass while checking nothing.
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 1;
  }
  return ok ? 0 : 1;
}
