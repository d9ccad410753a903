// Writing the plan text format (plan/plan_text.h), and pointing messages about steps at their lines.
#include <cctype>
#include <string>

#include "plan/plan_text.h"

namespace peerreduce {
namespace {

// The decimal number at `at` in `text` (digits only), or -1; `end` is set past it.
long long digitsAt(const std::string& text, std::size_t at, std::size_t& end) {
  // 18 digits cannot overflow a long long; no index in a plan is that long.
  constexpr std::size_t kMaxDigits = 18;
  end = at;
  long long value = 0;
  while (end < text.size() && end - at < kMaxDigits && std::isdigit(static_cast<unsigned char>(text[end]))) {
    value = value * 10 + (text[end] - '0');
    ++end;
  }
  return end == at ? -1 : value;
}

}  // namespace

std::string formatPlanText(const Plan& plan) {
  std::string out = "peerreduce-plan " + std::to_string(kPlanTextVersion) + "\n";
  if (!plan.description.empty()) out += "name " + plan.description + "\n";
  out += "collective " + std::string(collectiveName(plan.collective)) + "\n";
  out += "world " + std::to_string(plan.world_size) + "\n";
  if (plan.collective == Collective::kBroadcast) out += "root " + std::to_string(plan.root) + "\n";
  out += "chunks " + std::to_string(plan.num_chunks) + "\n";
  out += "slots " + std::to_string(plan.scratch_slots) + "\n";
  if (plan.private_slots != 0) out += "private " + std::to_string(plan.private_slots) + "\n";
  out += "flags " + std::to_string(plan.num_flags) + "\n";
  out += std::string("in-place ") + (plan.in_place ? "yes" : "no") + "\n";
  for (std::size_t r = 0; r < plan.programs.size(); ++r) {
    const RankProgram& program = plan.programs[r];
    out += "rank " + std::to_string(r) + "\n";
    // describeStep is the grammar of a step line: one spelling for files, logs and the verifier.
    for (const Step& step : program.steps) out += "  " + describeStep(program, step) + "\n";
  }
  return out + "end\n";
}

std::string withPlanLines(const std::string& message, const PlanText& text) {
  static constexpr std::string_view kStep = "step #";
  static constexpr std::string_view kRank = "rank ";
  std::string out;
  std::size_t copied = 0;  // message[0, copied) is in `out`
  std::size_t clause = 0;  // where the text about the current step may begin: after the previous step named
  // Each iteration moves past one "step #": bounded by the message's length.
  for (std::size_t at = message.find(kStep); at != std::string::npos; at = message.find(kStep, at + 1)) {
    std::size_t step_end = 0;
    const long long step = digitsAt(message, at + kStep.size(), step_end);
    // The rank is the last "rank R" before the step and after the previous step (the verifier writes
    // "rank 1 op 0 step #3" and "op 0 rank 1 step #3").
    const std::size_t rank_at = message.rfind(kRank, at);
    std::size_t rank_end = 0;
    const long long rank =
        rank_at == std::string::npos || rank_at < clause ? -1 : digitsAt(message, rank_at + kRank.size(), rank_end);
    clause = step_end;
    if (step < 0 || rank < 0 || static_cast<std::size_t>(rank) >= text.step_lines.size()) continue;
    const auto& lines = text.step_lines[static_cast<std::size_t>(rank)];
    if (static_cast<std::size_t>(step) >= lines.size()) continue;
    out.append(message, copied, step_end - copied);
    out += " [line " + std::to_string(lines[static_cast<std::size_t>(step)]) + "]";
    copied = step_end;
  }
  out.append(message, copied, std::string::npos);
  return out;
}

}  // namespace peerreduce
