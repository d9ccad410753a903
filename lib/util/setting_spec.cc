#include "util/setting_spec.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "util/link_mask_syntax.h"
#include "util/parse.h"

namespace peerreduce {
namespace {

// Longest fraction text accepted: "0." followed by 17 digits already resolves every double in 0..1.
constexpr std::size_t kMaxFractionChars = 20;
// Longest value text repeated in a message: enough to recognise it, bounded for hostile input.
constexpr std::size_t kMaxShownChars = 64;

const char* systemGetenv(const char* name) { return std::getenv(name); }

std::string shown(std::string_view text) { return std::string(text.substr(0, kMaxShownChars)); }

// "NAME='text'": how a message starts when it is about text the user gave.
std::string given(const SettingSpec& spec, std::string_view text) { return spec.name + "='" + shown(text) + "'"; }

// " (NAME)" or " (NAME; hint)": how a message about a value ends.
std::string whose(const SettingSpec& spec) {
  return " (" + spec.name + (spec.range_hint.empty() ? "" : "; " + spec.range_hint) + ")";
}

// "1024 (1 KiB)" for byte counts that are whole KiB, MiB, GiB or TiB; the plain number otherwise; the largest
// count, a default that sets no limit, as such.
std::string bytesInWords(std::uint64_t bytes) {
  if (bytes == UINT64_MAX) return "no limit";
  static constexpr struct {
    int shift;
    const char* name;
  } kUnits[] = {{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
  for (const auto& unit : kUnits) {
    const std::uint64_t one = std::uint64_t{1} << unit.shift;
    if (bytes >= one && bytes % one == 0) return std::to_string(bytes >> unit.shift) + " " + unit.name;
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

// Decimal digits only: no sign, no spaces.
StatusOr<std::int64_t> parseDigits(const SettingSpec& spec, std::string_view text) {
  std::int64_t value = 0;
  for (char c : text) {  // bounded by the text's length
    if (c < '0' || c > '9') return invalidArgumentError(given(spec, text) + " is not a whole number");
    const std::int64_t digit = c - '0';
    if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
      return invalidArgumentError(given(spec, text) + " is too large");
    }
    value = value * 10 + digit;
  }
  return value;
}

// A decimal fraction in plain notation ("0", "1", "0.5", ".25", "1.0"), parsed digit by digit so the
// result does not depend on the C locale's decimal point.
StatusOr<double> parseFraction(const SettingSpec& spec, std::string_view text) {
  const auto bad = [&]() { return invalidArgumentError(given(spec, text) + " is not a number in 0..1 such as 0.5"); };
  if (text.size() > kMaxFractionChars) return bad();
  double whole = 0.0;
  double fraction = 0.0;
  double scale = 1.0;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : text) {  // bounded by kMaxFractionChars
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (seen_point) {
        scale *= 10.0;
        fraction = fraction * 10.0 + (c - '0');
      } else {
        whole = whole * 10.0 + (c - '0');
      }
    } else {
      return bad();
    }
  }
  if (!seen_digit) return bad();
  return whole + fraction / scale;
}

StatusOr<std::int64_t> parseChoice(const SettingSpec& spec, std::string_view text) {
  for (const SettingChoice& choice : spec.choices) {
    if (choice.text == text) return choice.value;
  }
  if (spec.kind == SettingKind::kBoolean) {
    return invalidArgumentError(given(spec, text) + " is not " + spec.choices_text);
  }
  return invalidArgumentError(spec.name + ": unknown " + spec.noun + " '" + shown(text) + "'; expected one of " +
                              describeAccepted(spec));
}

// The range check of every kind; `from_text` is the text the value came from (empty for a value from
// code), named first when given.
Status checkValue(const SettingSpec& spec, const SettingValue& value, std::string_view from_text) {
  if (!settingValueHasKind(spec, value)) {
    return internalError(spec.name + ": a value of the wrong type was given to the settings registry");
  }
  const std::string prefix = from_text.empty() ? "" : given(spec, from_text) + ": ";
  const std::string unit = spec.unit.empty() ? "" : " " + spec.unit;
  switch (spec.kind) {
    case SettingKind::kInteger: {
      const std::int64_t v = std::get<std::int64_t>(value);
      if (v >= spec.min_integer && v <= spec.max_integer) return Status::ok();
      return invalidArgumentError(prefix + spec.noun + " of " + std::to_string(v) + unit + " is outside " +
                                  std::to_string(spec.min_integer) + ".." + std::to_string(spec.max_integer) + unit +
                                  whose(spec));
    }
    case SettingKind::kByteSize: {
      const std::uint64_t v = std::get<std::uint64_t>(value);
      const bool in_range = v >= spec.min_bytes && v <= spec.max_bytes;
      const bool multiple = spec.multiple_of == 0 || v % spec.multiple_of == 0;
      const bool shape = !spec.power_of_two || (v != 0 && (v & (v - 1)) == 0);
      if (in_range && multiple && shape) return Status::ok();
      const std::string what = prefix + spec.noun + " of " + std::to_string(v) + " bytes is ";
      const std::string range = std::to_string(spec.min_bytes) + ".." + std::to_string(spec.max_bytes);
      if (spec.multiple_of != 0) {
        return invalidArgumentError(what + "not a multiple of " + std::to_string(spec.multiple_of) + " (" +
                                    spec.multiple_why + ") in " + range + whose(spec));
      }
      if (spec.power_of_two) return invalidArgumentError(what + "not a power of two in " + range + whose(spec));
      if (spec.max_bytes == UINT64_MAX) {
        return invalidArgumentError(what + "below its least value of " + std::to_string(spec.min_bytes) + " bytes" +
                                    whose(spec));
      }
      return invalidArgumentError(what + "outside " + range + whose(spec));
    }
    case SettingKind::kBoolean:
      return Status::ok();
    case SettingKind::kChoice: {
      const std::int64_t v = std::get<std::int64_t>(value);
      std::int64_t low = std::numeric_limits<std::int64_t>::max();
      std::int64_t high = std::numeric_limits<std::int64_t>::min();
      for (const SettingChoice& choice : spec.choices) {
        if (choice.value == v) return Status::ok();
        low = std::min(low, choice.value);
        high = std::max(high, choice.value);
      }
      return invalidArgumentError(prefix + spec.noun + " value " + std::to_string(v) + " is not valid; expected " +
                                  std::to_string(low) + ".." + std::to_string(high) + " (" + describeAccepted(spec) +
                                  ")" + whose(spec));
    }
    case SettingKind::kFraction: {
      const double v = std::get<double>(value);
      if (v >= 0.0 && v <= 1.0) return Status::ok();  // also refuses NaN
      return invalidArgumentError(prefix + spec.noun + " " + std::to_string(v) + " is outside 0..1" + whose(spec));
    }
    case SettingKind::kPath:
    case SettingKind::kText:
    case SettingKind::kLinkMask: {
      const std::string& v = std::get<std::string>(value);
      if (spec.max_chars != 0 && v.size() > spec.max_chars) {
        return invalidArgumentError(prefix + spec.noun + " of " + std::to_string(v.size()) + " characters exceeds " +
                                    std::to_string(spec.max_chars) + whose(spec));
      }
      if (spec.kind == SettingKind::kPath || spec.kind == SettingKind::kText) return Status::ok();
      const auto entries = parseLinkMaskSyntax(v);
      if (!entries.isOk()) return invalidArgumentError(prefix + entries.status().message() + whose(spec));
      return Status::ok();
    }
  }
  return internalError(spec.name + ": unknown setting kind");
}

}  // namespace

const char* settingKindName(SettingKind kind) {
  switch (kind) {
    case SettingKind::kInteger:
      return "integer";
    case SettingKind::kByteSize:
      return "byte size";
    case SettingKind::kBoolean:
      return "boolean";
    case SettingKind::kChoice:
      return "choice";
    case SettingKind::kFraction:
      return "fraction";
    case SettingKind::kPath:
      return "path";
    case SettingKind::kText:
      return "text";
    case SettingKind::kLinkMask:
      return "link mask";
  }
  return "unknown";
}

const char* settingAgreementName(SettingAgreement agreement) {
  switch (agreement) {
    case SettingAgreement::kFingerprint:
      return "checked";
    case SettingAgreement::kSameUnchecked:
      return "unchecked";
    case SettingAgreement::kLocal:
      return "no";
    case SettingAgreement::kComparedByReader:
      return "checked by its reader";
  }
  return "unknown";
}

bool settingValueHasKind(const SettingSpec& spec, const SettingValue& value) {
  switch (spec.kind) {
    case SettingKind::kInteger:
    case SettingKind::kChoice:
      return std::holds_alternative<std::int64_t>(value);
    case SettingKind::kByteSize:
      return std::holds_alternative<std::uint64_t>(value);
    case SettingKind::kBoolean:
      return std::holds_alternative<bool>(value);
    case SettingKind::kFraction:
      return std::holds_alternative<double>(value);
    case SettingKind::kPath:
    case SettingKind::kText:
    case SettingKind::kLinkMask:
      return std::holds_alternative<std::string>(value);
  }
  return false;
}

StatusOr<SettingValue> parseSettingText(const SettingSpec& spec, std::string_view text) {
  const bool textual =
      spec.kind == SettingKind::kPath || spec.kind == SettingKind::kText || spec.kind == SettingKind::kLinkMask;
  if (text.empty() && !textual) return invalidArgumentError(spec.name + " is empty; give a value or leave it unset");
  SettingValue value;
  switch (spec.kind) {
    case SettingKind::kInteger: {
      // A minus sign only where the setting has negative values (PEERREDUCE_DEVICE's -1 and -2).
      const bool negative = spec.min_integer < 0 && text.size() > 1 && text.front() == '-';
      PR_ASSIGN_OR_RETURN(const std::int64_t magnitude, parseDigits(spec, negative ? text.substr(1) : text));
      value = negative ? -magnitude : magnitude;
      break;
    }
    case SettingKind::kByteSize: {
      auto bytes = parseByteSize(std::string(text));
      if (!bytes.isOk()) return bytes.status().withContext(spec.name);
      value = static_cast<std::uint64_t>(*bytes);
      break;
    }
    case SettingKind::kBoolean: {
      PR_ASSIGN_OR_RETURN(const std::int64_t choice, parseChoice(spec, text));
      value = choice != 0;
      break;
    }
    case SettingKind::kChoice: {
      PR_ASSIGN_OR_RETURN(value, parseChoice(spec, text));
      break;
    }
    case SettingKind::kFraction: {
      PR_ASSIGN_OR_RETURN(value, parseFraction(spec, text));
      break;
    }
    case SettingKind::kPath:
    case SettingKind::kText:
    case SettingKind::kLinkMask:
      value = std::string(text);
      break;
  }
  PR_RETURN_IF_ERROR(checkValue(spec, value, text));
  return value;
}

Status checkSettingValue(const SettingSpec& spec, const SettingValue& value) { return checkValue(spec, value, ""); }

StatusOr<std::optional<SettingValue>> readSetting(const SettingSpec& spec, const Getenv& getenv) {
  const char* text = getenv ? getenv(spec.name.c_str()) : systemGetenv(spec.name.c_str());
  if (text == nullptr || *text == '\0') return std::optional<SettingValue>();
  PR_ASSIGN_OR_RETURN(SettingValue value, parseSettingText(spec, text));
  return std::optional<SettingValue>(std::move(value));
}

std::string formatSettingValue(const SettingSpec& spec, const SettingValue& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    if (spec.kind == SettingKind::kChoice) {
      for (const SettingChoice& choice : spec.choices) {
        if (choice.value == *integer) return choice.text;
      }
    }
    return std::to_string(*integer);
  }
  if (const auto* bytes = std::get_if<std::uint64_t>(&value)) return std::to_string(*bytes);
  if (const auto* flag = std::get_if<bool>(&value)) {
    for (const SettingChoice& choice : spec.choices) {
      if ((choice.value != 0) == *flag) return choice.text;
    }
    return *flag ? "1" : "0";
  }
  if (const auto* fraction = std::get_if<double>(&value)) {
    // Shortest fixed notation that reads back as the same double (plain digits: the fraction grammar
    // has no exponent).
    char text[64];
    const auto result = std::to_chars(text, text + sizeof(text), *fraction, std::chars_format::fixed);
    if (result.ec != std::errc()) return std::to_string(*fraction);
    return std::string(text, result.ptr);
  }
  return std::get<std::string>(value);
}

std::string describeDefault(const SettingSpec& spec) {
  if (!spec.default_value) return spec.default_note;
  std::string text;
  if (const auto* bytes = std::get_if<std::uint64_t>(&*spec.default_value)) {
    text = bytesInWords(*bytes);
  } else if (const auto* words = std::get_if<std::string>(&*spec.default_value); words != nullptr && words->empty()) {
    return spec.default_note.empty() ? "none" : spec.default_note;
  } else {
    text = formatSettingValue(spec, *spec.default_value) + (spec.unit.empty() ? "" : " " + spec.unit);
  }
  return spec.default_note.empty() ? text : text + " (" + spec.default_note + ")";
}

std::string describeAccepted(const SettingSpec& spec) {
  switch (spec.kind) {
    case SettingKind::kInteger:
      return std::to_string(spec.min_integer) + ".." + std::to_string(spec.max_integer) +
             (spec.unit.empty() ? "" : " " + spec.unit);
    case SettingKind::kByteSize: {
      std::string out = spec.max_bytes != UINT64_MAX
                            ? bytesInWords(spec.min_bytes) + " .. " + bytesInWords(spec.max_bytes)
                        : spec.min_bytes == 0 ? "any byte size"
                                              : "at least " + bytesInWords(spec.min_bytes);
      if (spec.multiple_of != 0) out += ", a multiple of " + bytesInWords(spec.multiple_of);
      if (spec.power_of_two) out += ", a power of two";
      return out;
    }
    case SettingKind::kBoolean:
      return spec.choices_text;
    case SettingKind::kChoice: {
      std::string out;
      for (const SettingChoice& choice : spec.choices) out += (out.empty() ? "" : ", ") + choice.text;
      return out;
    }
    case SettingKind::kFraction:
      return "0 .. 1";
    case SettingKind::kPath:
      return spec.max_chars == 0 ? "a path" : "a path of at most " + std::to_string(spec.max_chars) + " characters";
    case SettingKind::kText:
      return spec.max_chars == 0 ? "any text" : "text of at most " + std::to_string(spec.max_chars) + " characters";
    case SettingKind::kLinkMask:
      return "entries A-B, host:A-B or host:all separated by commas, at most " + std::to_string(spec.max_chars) +
             " characters";
  }
  return "";
}

}  // namespace peerreduce
