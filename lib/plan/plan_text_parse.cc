// Reading the plan text format (plan/plan_text.h). One pass over the lines, no recursion; every loop is
// bounded by the text's length (itself bounded) or by a kMaxPlanText* limit.
#include <array>
#include <string>

#include "plan/plan_text.h"
#include "util/parse.h"
#include "util/text_file.h"

namespace peerreduce {
namespace {

// Where the parser is, for messages: the line, and inside a rank's section the rank and its next step.
struct Where {
  int line = 0;
  int rank = -1;
  int step = -1;
};

Status errorAt(const Where& at, const std::string& what) {
  std::string where = "plan line " + std::to_string(at.line);
  if (at.rank >= 0) {
    where += ", rank " + std::to_string(at.rank);
    if (at.step >= 0) where += " step #" + std::to_string(at.step);
  }
  return invalidArgumentError(where + ": " + what);
}

// A token as it may appear in a message: short, and only printable characters (the file is untrusted).
constexpr std::size_t kShownChars = 32;
std::string shown(std::string_view token) {
  std::string out;
  for (std::size_t i = 0; i < token.size() && i < kShownChars; ++i) {
    const char c = token[i];
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  if (token.size() > kShownChars) out += "...";
  return "'" + out + "'";
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Runs of non-blank characters; '[' and ']' are tokens of their own, since describeStep writes the source
// list as "[s0.0 s1.0]".
std::vector<std::string_view> tokenize(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (blank(line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '[' || line[i] == ']') {
      out.push_back(line.substr(i, 1));
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < line.size() && !blank(line[i]) && line[i] != '[' && line[i] != ']') ++i;
    out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::string_view withoutComment(std::string_view line) {
  const auto hash = line.find('#');
  return hash == std::string_view::npos ? line : line.substr(0, hash);
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

// The header's settings, each given at most once before the first rank.
enum HeaderKey { kName, kCollective, kWorld, kRoot, kChunks, kSlots, kPrivate, kFlags, kInPlace, kHeaderKeys };
constexpr std::array<std::string_view, kHeaderKeys> kHeaderNames = {"name",  "collective", "world", "root",    "chunks",
                                                                    "slots", "private",    "flags", "in-place"};
constexpr std::array<HeaderKey, 5> kRequiredKeys = {kCollective, kWorld, kChunks, kSlots, kFlags};

class Parser {
 public:
  StatusOr<PlanText> run(std::string_view text) {
    if (text.size() > kMaxPlanTextBytes) {
      return invalidArgumentError("plan text of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                                  std::to_string(kMaxPlanTextBytes));
    }
    bool versioned = false;
    bool ended = false;
    std::size_t start = 0;
    // One iteration per line: `start` moves past a newline each time, or to the end.
    while (start <= text.size()) {
      const std::size_t newline = text.find('\n', start);
      const std::size_t stop = newline == std::string_view::npos ? text.size() : newline;
      const std::string_view raw = text.substr(start, stop - start);
      start = stop + 1;
      at_.line += 1;
      const std::string_view content = withoutComment(raw);
      const auto words = tokenize(content);
      if (words.empty()) continue;
      if (ended) return errorAt({at_.line}, "text after 'end' (a plan file holds one plan)");
      if (!versioned) {
        PR_RETURN_IF_ERROR(version(words));
        versioned = true;
      } else if (words[0] == "end" && words.size() == 1) {
        PR_RETURN_IF_ERROR(finish());
        ended = true;
      } else if (words[0] == "rank") {
        PR_RETURN_IF_ERROR(rankLine(words));
      } else if (at_.rank >= 0) {
        PR_RETURN_IF_ERROR(stepLine(words));
      } else {
        PR_RETURN_IF_ERROR(headerLine(words, content));
      }
    }
    if (!versioned) return invalidArgumentError("plan text is empty; it must start with 'peerreduce-plan 1'");
    if (!ended) return errorAt({at_.line}, "the plan ends without 'end' (is the file cut off?)");
    out_.plan.signal_counts = signalCounts(out_.plan);
    return std::move(out_);
  }

 private:
  Status version(const std::vector<std::string_view>& words) {
    if (words.size() != 2 || words[0] != "peerreduce-plan") {
      return errorAt({at_.line}, "the first line must be 'peerreduce-plan " + std::to_string(kPlanTextVersion) + "'");
    }
    if (words[1] != std::to_string(kPlanTextVersion)) {
      return errorAt({at_.line}, "plan format version " + shown(words[1]) + " is not supported; this build reads " +
                                     std::to_string(kPlanTextVersion));
    }
    return Status::ok();
  }

  StatusOr<int> number(std::string_view text, std::int64_t low, std::int64_t high, const char* what) const {
    auto value = parseInt64(text, low, high, what);
    if (!value.isOk()) return errorAt(at_, value.status().message());
    return static_cast<int>(*value);
  }

  // A number after a one-letter prefix: "c3", "r1".
  StatusOr<int> prefixed(std::string_view token, char prefix, std::int64_t high, const char* what) const {
    if (token.size() < 2 || token[0] != prefix) {
      return errorAt(at_, "expected " + std::string(what) + " as " + prefix + "N, got " + shown(token));
    }
    return number(token.substr(1), 0, high, what);
  }

  Status headerLine(const std::vector<std::string_view>& words, std::string_view content) {
    if (programs_started_) return errorAt(at_, "settings go before the first rank");
    int key = 0;
    while (key < kHeaderKeys && kHeaderNames[static_cast<std::size_t>(key)] != words[0]) ++key;
    if (key == kHeaderKeys) {
      for (std::string_view step : {"copy", "ce-copy", "reduce", "signal", "wait"}) {
        if (words[0] == step) return errorAt(at_, "a step before the first 'rank R' line");
      }
      return errorAt(
          at_, "unknown line " + shown(words[0]) +
                   "; before the ranks come name, collective, world, root, chunks, slots, private, flags, in-place");
    }
    if (seen_[static_cast<std::size_t>(key)]) return errorAt(at_, std::string(words[0]) + " is given twice");
    seen_[static_cast<std::size_t>(key)] = true;
    Plan& plan = out_.plan;
    if (key == kName) {
      // The rest of the line, as written (the description plans carry for logs and reports).
      const std::string_view name = trimmed(trimmed(content).substr(words[0].size()));
      if (name.size() > kMaxPlanTextNameChars) {
        return errorAt(at_, "name longer than " + std::to_string(kMaxPlanTextNameChars) + " characters");
      }
      for (char c : name) {
        if (c < 0x20 || c >= 0x7f) return errorAt(at_, "name holds a character that is not printable ASCII");
      }
      plan.description = std::string(name);
      return Status::ok();
    }
    if (words.size() != 2) return errorAt(at_, std::string(words[0]) + " takes one value");
    switch (key) {
      case kCollective: {
        auto collective = parseCollective(words[1]);
        if (!collective.isOk()) return errorAt(at_, collective.status().message());
        plan.collective = *collective;
        return Status::ok();
      }
      case kWorld: {
        PR_ASSIGN_OR_RETURN(plan.world_size, number(words[1], 1, kMaxWorldSize, "world size"));
        return Status::ok();
      }
      case kRoot: {
        PR_ASSIGN_OR_RETURN(plan.root, number(words[1], 0, kMaxWorldSize - 1, "root"));
        return Status::ok();
      }
      case kChunks: {
        PR_ASSIGN_OR_RETURN(plan.num_chunks, number(words[1], 1, kMaxPlanTextChunks, "chunks per block"));
        return Status::ok();
      }
      case kSlots: {
        PR_ASSIGN_OR_RETURN(plan.scratch_slots, number(words[1], 0, kMaxPlanTextSlots, "scratch slots"));
        return Status::ok();
      }
      case kPrivate: {
        PR_ASSIGN_OR_RETURN(plan.private_slots, number(words[1], 0, kMaxPlanTextSlots, "private slots"));
        return Status::ok();
      }
      case kFlags: {
        PR_ASSIGN_OR_RETURN(plan.num_flags, number(words[1], 1, kMaxPlanTextFlags, "flags"));
        return Status::ok();
      }
      default: {  // kInPlace
        if (words[1] != "yes" && words[1] != "no") return errorAt(at_, "in-place is yes or no, not " + shown(words[1]));
        plan.in_place = words[1] == "yes";
        return Status::ok();
      }
    }
  }

  // The header is complete: check what depends on several settings and make room for the programs.
  Status startPrograms() {
    for (HeaderKey key : kRequiredKeys) {
      if (!seen_[static_cast<std::size_t>(key)]) {
        return errorAt(at_, "the settings lack '" + std::string(kHeaderNames[static_cast<std::size_t>(key)]) +
                                "' (collective, world, chunks, slots and flags are required before the ranks)");
      }
    }
    Plan& plan = out_.plan;
    if (seen_[kRoot] && plan.collective != Collective::kBroadcast) {
      return errorAt(at_, "root is broadcast's; a " + std::string(collectiveName(plan.collective)) + " has none");
    }
    if (plan.private_slots > plan.scratch_slots) {
      return errorAt(at_, "private " + std::to_string(plan.private_slots) + " names more slots than the plan's " +
                              std::to_string(plan.scratch_slots) + " (the private ones are the last of them)");
    }
    if (plan.root >= plan.world_size) {
      return errorAt(at_, "root " + std::to_string(plan.root) + " is not a rank of " + std::to_string(plan.world_size));
    }
    plan.algorithm = Algorithm::kUser;
    plan.num_blocks = blocksOf(plan.collective, plan.world_size);
    plan.programs.resize(static_cast<std::size_t>(plan.world_size));
    out_.step_lines.resize(static_cast<std::size_t>(plan.world_size));
    programs_started_ = true;
    return Status::ok();
  }

  Status rankLine(const std::vector<std::string_view>& words) {
    at_.rank = -1;
    at_.step = -1;
    if (!programs_started_) PR_RETURN_IF_ERROR(startPrograms());
    const int expected = next_rank_;
    if (words.size() != 2) return errorAt(at_, "expected 'rank " + std::to_string(expected) + "'");
    if (expected >= out_.plan.world_size) {
      return errorAt(at_, "a section after the last rank (" + std::to_string(out_.plan.world_size - 1) + ")");
    }
    PR_ASSIGN_OR_RETURN(const int rank, number(words[1], 0, kMaxWorldSize - 1, "rank"));
    if (rank != expected) {
      return errorAt(at_, "rank " + std::to_string(rank) + " where rank " + std::to_string(expected) +
                              " was expected (every rank has one section, in order)");
    }
    at_.rank = rank;
    at_.step = 0;
    ++next_rank_;
    return Status::ok();
  }

  Status finish() {
    at_.rank = -1;
    at_.step = -1;
    if (!programs_started_) PR_RETURN_IF_ERROR(startPrograms());
    if (next_rank_ < out_.plan.world_size) {
      return errorAt(at_, "rank " + std::to_string(next_rank_) + " has no section (every rank 0.." +
                              std::to_string(out_.plan.world_size - 1) + " needs one, in order)");
    }
    return Status::ok();
  }

  StatusOr<BufferRef> ref(std::string_view token) const {
    const Plan& plan = out_.plan;
    const int top = plan.world_size - 1;
    BufferRef out;
    if (token.rfind("in", 0) == 0 && token.size() > 2) {
      out.kind = BufferKind::kInput;
      PR_ASSIGN_OR_RETURN(out.rank, number(token.substr(2), 0, top, "rank of a send buffer"));
      return out;
    }
    if (token.rfind("out", 0) == 0 && token.size() > 3) {
      out.kind = BufferKind::kOutput;
      PR_ASSIGN_OR_RETURN(out.rank, number(token.substr(3), 0, top, "rank of a receive buffer"));
      return out;
    }
    const auto dot = token.find('.');
    if (token.size() > 1 && token[0] == 's' && dot != std::string_view::npos) {
      out.kind = BufferKind::kScratch;
      PR_ASSIGN_OR_RETURN(out.rank, number(token.substr(1, dot - 1), 0, top, "rank of a scratch slot"));
      if (plan.scratch_slots == 0) return errorAt(at_, "names scratch " + shown(token) + " but the plan has 0 slots");
      PR_ASSIGN_OR_RETURN(out.slot, number(token.substr(dot + 1), 0, plan.scratch_slots - 1, "scratch slot"));
      return out;
    }
    return errorAt(at_, "expected a buffer (inR, outR or sR.SLOT), got " + shown(token));
  }

  Status expect(std::string_view token, std::string_view wanted, const char* form) const {
    if (token != wanted) return errorAt(at_, "expected " + std::string(form) + ", got " + shown(token));
    return Status::ok();
  }

  Status dataStep(const std::vector<std::string_view>& words, Step& step, RankProgram& program) {
    const bool reduce = words[0] == "reduce";
    const char* form = reduce ? "'reduce cN [SRC SRC ...] -> DST [final]'" : "'copy cN [SRC] -> DST'";
    step.kind = reduce ? StepKind::kReduce : StepKind::kCopy;
    step.copy_engine = words[0] == "ce-copy";
    if (words.size() < 7) return errorAt(at_, std::string("too short; expected ") + form);
    const Plan& plan = out_.plan;
    PR_ASSIGN_OR_RETURN(step.chunk, prefixed(words[1], 'c', plan.num_blocks * plan.num_chunks - 1, "chunk"));
    PR_RETURN_IF_ERROR(expect(words[2], "[", form));
    std::size_t i = 3;
    const std::size_t first_source = program.sources.size();
    while (i < words.size() && words[i] != "]") {
      if (i - 3 == static_cast<std::size_t>(kMaxPlanTextSources)) {
        return errorAt(at_, "more than " + std::to_string(kMaxPlanTextSources) + " sources");
      }
      PR_ASSIGN_OR_RETURN(BufferRef source, ref(words[i]));
      program.sources.push_back(source);
      ++i;
    }
    const std::size_t sources = program.sources.size() - first_source;
    if (i == words.size()) return errorAt(at_, std::string("the source list has no ']'; expected ") + form);
    if (sources == 0) return errorAt(at_, "a step needs a source");
    if (!reduce && sources != 1) return errorAt(at_, "a copy has one source; a reduce folds several");
    if (i + 2 >= words.size()) return errorAt(at_, std::string("no destination; expected ") + form);
    PR_RETURN_IF_ERROR(expect(words[i + 1], "->", form));
    PR_ASSIGN_OR_RETURN(step.dst, ref(words[i + 2]));
    std::size_t end = i + 3;
    if (end < words.size() && words[end] == "final") {
      if (!reduce) return errorAt(at_, "only a reduce can be final (where an integer avg divides)");
      step.finalize = true;
      ++end;
    }
    if (end != words.size()) return errorAt(at_, "unexpected " + shown(words[end]) + " after the destination");
    step.src_begin = static_cast<std::uint32_t>(first_source);
    step.src_count = static_cast<std::uint32_t>(sources);
    return Status::ok();
  }

  Status syncStep(const std::vector<std::string_view>& words, Step& step) {
    const bool wait = words[0] == "wait";
    const char* form = wait ? "'wait rP flag F >= V'" : "'signal rP flag F'";
    if (words.size() != (wait ? 6u : 4u)) return errorAt(at_, std::string("expected ") + form);
    step.kind = wait ? StepKind::kWait : StepKind::kSignal;
    const Plan& plan = out_.plan;
    PR_ASSIGN_OR_RETURN(step.peer, prefixed(words[1], 'r', plan.world_size - 1, "peer"));
    if (step.peer == at_.rank) return errorAt(at_, "a rank cannot " + std::string(words[0]) + " itself");
    PR_RETURN_IF_ERROR(expect(words[2], "flag", form));
    PR_ASSIGN_OR_RETURN(step.flag, number(words[3], 0, plan.num_flags - 1, "flag"));
    if (wait) {
      PR_RETURN_IF_ERROR(expect(words[4], ">=", form));
      PR_ASSIGN_OR_RETURN(const int value, number(words[5], 1, kMaxPlanTextWaitValue, "wait value"));
      step.value = static_cast<std::uint32_t>(value);
    }
    return Status::ok();
  }

  Status stepLine(const std::vector<std::string_view>& words) {
    const auto rank = static_cast<std::size_t>(at_.rank);
    RankProgram& program = out_.plan.programs[rank];
    if (program.steps.size() == kMaxPlanTextStepsPerRank) {
      return errorAt(at_, "more than " + std::to_string(kMaxPlanTextStepsPerRank) + " steps in one rank");
    }
    if (total_steps_ == kMaxPlanTextSteps) {
      return errorAt(at_, "more than " + std::to_string(kMaxPlanTextSteps) + " steps in the plan");
    }
    Step step;
    const std::string_view kind = words[0];
    if (kind == "copy" || kind == "ce-copy" || kind == "reduce") {
      PR_RETURN_IF_ERROR(dataStep(words, step, program));
    } else if (kind == "signal" || kind == "wait") {
      PR_RETURN_IF_ERROR(syncStep(words, step));
    } else {
      for (std::string_view key : kHeaderNames) {
        if (kind == key) return errorAt(at_, std::string(key) + " is a setting; settings go before the first rank");
      }
      return errorAt(at_, "unknown step " + shown(kind) + "; steps are copy, ce-copy, reduce, signal and wait");
    }
    program.steps.push_back(step);
    out_.step_lines[rank].push_back(at_.line);
    ++total_steps_;
    ++at_.step;
    return Status::ok();
  }

  PlanText out_;
  Where at_;
  std::array<bool, kHeaderKeys> seen_{};
  bool programs_started_ = false;
  int next_rank_ = 0;
  std::size_t total_steps_ = 0;
};

}  // namespace

StatusOr<PlanText> parsePlanText(std::string_view text) { return Parser().run(text); }

StatusOr<PlanText> loadPlanText(const std::string& path, std::string_view hint) {
  PR_ASSIGN_OR_RETURN(const std::string text, readTextFile(path, kMaxPlanTextBytes, "plan file", hint));
  auto parsed = parsePlanText(text);
  if (!parsed.isOk()) return parsed.status().withContext("plan file '" + path + "'");
  return parsed;
}

}  // namespace peerreduce
