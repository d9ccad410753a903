// main() of the suites that run allreduce cases: GoogleTest, the world provider (simulator, or the GPUs
// under mpirun), and a count of the cases executed.
//
// When PEERREDUCE_CASE_LOG names a file, each test process appends "<test filter> <cases>" to it, so
// a script can add up how many allreduce cases a whole ctest run executed (ctest runs every test in
// its own process).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "allreduce_case.h"
#include "world_provider.h"

namespace {

class CaseCountReporter : public ::testing::Environment {
 public:
  void TearDown() override {
    const unsigned long long cases = peerreduce::testing::allreduceCasesRun();
    if (cases == 0) return;
    const char* path = std::getenv("PEERREDUCE_CASE_LOG");
    if (path == nullptr || *path == '\0') return;
    if (std::FILE* f = std::fopen(path, "a")) {
      const auto* info = ::testing::UnitTest::GetInstance();
      std::fprintf(f, "%s %llu\n", info->original_working_dir(), cases);
      std::fclose(f);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (!peerreduce::testing::setUpWorldProvider(&argc, &argv)) return 2;
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new CaseCountReporter);
  const int result = RUN_ALL_TESTS();
  peerreduce::testing::tearDownWorldProvider();
  return result;
}
