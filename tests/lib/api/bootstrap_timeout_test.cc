// Bootstrap exchanges (creation, buffer registration) wait for ranks that are still preparing, which an
// operation's timeout does not describe: they are bounded by Config::bootstrapTimeout(), the larger of
// PEERREDUCE_TIMEOUT_MS and PEERREDUCE_BOOTSTRAP_TIMEOUT_MS (default 10 s).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"
#include "sim/sim_cluster.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

TEST(BootstrapTimeout, IsTheLargerOfTheOperationTimeoutAndItsOwnFloor) {
  Config config;
  config.timeout = milliseconds(1);
  EXPECT_EQ(config.bootstrapTimeout(), milliseconds(kDefaultBootstrapTimeoutMs));
  config.timeout = milliseconds(kDefaultBootstrapTimeoutMs + 1);
  EXPECT_EQ(config.bootstrapTimeout(), config.timeout);
  EXPECT_EQ(Config{}.bootstrapTimeout(), milliseconds(kDefaultTimeoutMs));
  config.timeout = milliseconds(1);
  config.bootstrap_timeout = milliseconds(250);
  EXPECT_EQ(config.bootstrapTimeout(), milliseconds(250));
}

// PEERREDUCE_TIMEOUT_MS=1 failed creation whenever one rank reached the first exchange a millisecond after
// another ("bootstrap: rank 2 waited 1 ms"). A rank 50 ms late must not fail a world whose operations
// are bounded by 1 ms.
TEST(BootstrapTimeout, OneMillisecondTimeoutDoesNotFailCreationWhenARankIsLate) {
  constexpr auto kLate = milliseconds(50);  // far above the timeout, far below the default floor
  Config config;
  config.timeout = milliseconds(1);
  auto world = sim::SimWorld::create(4);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  auto cluster = sim::SimCluster::createWith(*world, [&](int rank) {
    if (rank == 3) std::this_thread::sleep_for(kLate);
    return Communicator::create(rank, 4, (*world)->bootstrap(rank), (*world)->transport(rank), config);
  });
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  EXPECT_EQ((*cluster)->comm(0).config().timeout, milliseconds(1)) << "operations keep their own bound";
}

// The floor is the bound a rank that never arrives is reported after.
TEST(BootstrapTimeout, MissingRankIsReportedAfterTheBootstrapBound) {
  Config config;
  config.timeout = milliseconds(1);
  config.bootstrap_timeout = milliseconds(100);
  auto world = sim::SimWorld::create(2);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  auto alone = Communicator::create(0, 2, (*world)->bootstrap(0), (*world)->transport(0), config);
  ASSERT_FALSE(alone.isOk());
  EXPECT_EQ(alone.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(alone.status().message().find("waited 100 ms"), std::string::npos) << alone.status().message();
}

}  // namespace
}  // namespace peerreduce
