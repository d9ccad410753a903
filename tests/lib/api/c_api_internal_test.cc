// The C API's internal safety nets (api/c_api_internal.h), which tests/api cannot reach through the
// public header: the exception barrier, the guard against reporting success as an error, and the
// prConfig_t conversion. Public behaviour of the C API is tested in tests/api.
#include "api/c_api_internal.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace peerreduce::capi {
namespace {

bool lastErrorContains(const std::string& word) {
  return std::string(prGetLastError()).find(word) != std::string::npos;
}

// No C++ exception may reach a C caller: each kind becomes a result code and a message.
TEST(CApiGuard, ExceptionsBecomeResultsWithAMessage) {
  EXPECT_EQ(guarded("prTest", []() -> prResult_t { throw std::bad_alloc(); }), prOutOfMemory);
  EXPECT_EQ(std::string(prGetLastError()), "prTest: out of memory: out of host memory");

  EXPECT_EQ(guarded("prTest", []() -> prResult_t { throw std::runtime_error("boom"); }), prInternalError);
  EXPECT_TRUE(lastErrorContains("prTest: internal error: unexpected exception (boom)")) << prGetLastError();
  EXPECT_TRUE(lastErrorContains("please report it")) << prGetLastError();

  EXPECT_EQ(guarded("prTest", []() -> prResult_t { throw 42; }), prInternalError);
  EXPECT_TRUE(lastErrorContains("unexpected non-standard exception")) << prGetLastError();

  EXPECT_EQ(guarded("prTest", []() -> prResult_t { return prTimeout; }), prTimeout);
}

// Reporting an ok Status as an error is a bug in peerreduce; a C caller must never get prSuccess with a
// message, so it becomes an internal error.
TEST(CApiRecordError, OkStatusReportedAsAnErrorBecomesInternal) {
  EXPECT_EQ(recordError("prTest", Status::ok()), prInternalError);
  EXPECT_TRUE(lastErrorContains("prTest: internal error: an ok status was reported as an error")) << prGetLastError();
  EXPECT_EQ(recordError("prOther", linkDownError("link 0->3 down")), prLinkDown);
  EXPECT_EQ(std::string(prGetLastError()), "prOther: link down: link 0->3 down");
  EXPECT_EQ(toResult("prOther", Status::ok()), prSuccess);
  EXPECT_EQ(std::string(prGetLastError()), "prOther: link down: link 0->3 down") << "success keeps the last error";
}

TEST(CApiToConfig, CopiesEveryFieldAndNamesTheStructOnBadValues) {
  prConfig_t config{};
  // A prConfig_t holds every Config field and its size: it starts from prConfigInit (c_api_config_test.cc
  // checks every field).
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  config.algorithm = prAlgoRabenseifner;
  config.timeout_ms = 250;
  config.scratch_bytes = std::size_t{1} << 20;
  config.verify_plans = 0;
  auto converted = toConfig(&config);
  ASSERT_TRUE(converted.isOk()) << converted.status().toString();
  EXPECT_EQ(converted->algorithm, Algorithm::kRabenseifner);
  EXPECT_EQ(converted->timeout.count(), 250);
  EXPECT_EQ(converted->scratch_bytes, std::size_t{1} << 20);
  EXPECT_FALSE(converted->verify_plans);

  config.algorithm = -1;
  auto bad = toConfig(&config);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("prConfig_t: algorithm value -1", 0), 0u) << bad.status().message();
}

}  // namespace
}  // namespace peerreduce::capi
