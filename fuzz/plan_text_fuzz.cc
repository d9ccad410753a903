// Fuzzes the plan text parser (PEERREDUCE_PLAN_FILE's contents, `peerreduce-sim plan check|run FILE`).
// Oracles: a refusal is kInvalidArgument naming the line; an accepted plan prints to text that parses back
// and prints the same again (the format's round trip), has a line for every step, within the text, and a
// fresh signal_counts; the verifier, which judges every accepted file next, runs on it (small plans only:
// its own fuzzer covers it in depth) and pointing its messages at lines keeps them intact but for the
// inserted "[line L]".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "plan/plan_text.h"
#include "verify/verifier.h"

namespace {

// Steps above which the verifier is not run: it is O(steps x ranks) and a fuzzer wants many inputs a second.
constexpr std::size_t kMaxVerifiedSteps = 2048;

// `message` without every " [line N]" withPlanLines inserted.
std::string withoutLines(const std::string& message) {
  std::string out;
  std::size_t at = 0;
  while (at < message.size()) {
    const std::size_t mark = message.find(" [line ", at);
    if (mark == std::string::npos) break;
    const std::size_t close = message.find(']', mark);
    if (close == std::string::npos) break;
    out.append(message, at, mark - at);
    at = close + 1;
  }
  return out + message.substr(at);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peerreduce;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parsePlanText(text);
  if (!parsed.isOk()) {
    if (parsed.status().code() != ErrorCode::kInvalidArgument) fuzz::oracleFailed("a refusal is not kInvalidArgument");
    const std::string& message = parsed.status().message();
    if (message.rfind("plan line ", 0) != 0 && message.rfind("plan text ", 0) != 0) {
      fuzz::oracleFailed("a refusal names no line: " + message);
    }
    return 0;
  }
  const Plan& plan = parsed->plan;
  if (plan.signal_counts != signalCounts(plan)) fuzz::oracleFailed("signal_counts is stale");
  std::size_t steps = 0;
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  if (parsed->step_lines.size() != plan.programs.size()) fuzz::oracleFailed("no line table for some rank");
  for (std::size_t r = 0; r < plan.programs.size(); ++r) {
    if (parsed->step_lines[r].size() != plan.programs[r].steps.size()) fuzz::oracleFailed("a step has no line");
    for (int line : parsed->step_lines[r]) {
      if (line < 1 || static_cast<std::size_t>(line) > lines) fuzz::oracleFailed("a step's line is outside the text");
    }
    steps += plan.programs[r].steps.size();
  }
  const std::string printed = formatPlanText(plan);
  auto again = parsePlanText(printed);
  if (!again.isOk()) fuzz::oracleFailed("a printed plan does not parse back: " + again.status().toString());
  if (formatPlanText(again->plan) != printed) fuzz::oracleFailed("a printed plan prints differently once read back");
  if (steps <= kMaxVerifiedSteps) {
    const VerifyReport report = verifyPlan(plan);
    for (const std::string& problem : report.problems) {
      if (withoutLines(withPlanLines(problem, *parsed)) != problem) {
        fuzz::oracleFailed("pointing a message at lines changed it: " + problem);
      }
    }
  }
  return 0;
}
