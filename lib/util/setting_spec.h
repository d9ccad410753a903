// One PEERREDUCE_* setting as data (SettingSpec) and the one parser every setting's text goes through.
//
// The settings themselves are listed in one table, lib/config/settings_registry.h; this file holds only
// the mechanism, in the lowest layer that needs it: the logger (util) reads PEERREDUCE_DEBUG before any
// Config exists, so the parser cannot live above util. Every variable is therefore read by the same rules:
// - an unset variable and an empty one mean the same: the value from code (or the default) stays;
// - text is parsed by the setting's kind (below), then checked against its range;
// - a bad value is kInvalidArgument naming the variable, the value as given and what is accepted.
//
// Kinds and their grammars:
//   kInteger   decimal digits only ("1500"), within [min_integer, max_integer]
//   kByteSize  parseByteSize's forms ("1048576", "64K", "32M", "32MiB", "1G"), within [min_bytes, max_bytes],
//              optionally a multiple of `multiple_of` or a power of two
//   kBoolean   one of `choices` (each spelling maps to 1 or 0)
//   kChoice    one of `choices` (each spelling maps to an enum's number)
//   kFraction  a plain decimal fraction in 0..1 ("0.5", ".25", "1"), read digit by digit (no locale)
//   kPath      any text of at most max_chars characters, naming a file
//   kText      any text of at most max_chars characters (a name)
//   kLinkMask  comma-separated A-B, host:A-B and host:all entries ("0-1,host:2-3"; util/link_mask_syntax.h),
//              at most max_chars; ranks are checked against the world size at communicator creation
//
// Thread safety: specs are immutable; every function here may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce {

enum class SettingKind { kInteger, kByteSize, kBoolean, kChoice, kFraction, kPath, kLinkMask, kText };
const char* settingKindName(SettingKind kind);

// Whether every rank of a world must give the same value.
enum class SettingAgreement {
  kFingerprint,    // yes, and creation checks it: the value is part of Config::fingerprint()
  kSameUnchecked,  // yes, but nothing compares it (read by a transport from its own environment)
  kLocal,          // no: each rank may differ
  // yes, and the layer that reads it compares it when it creates a communicator (the NCCL-compatible
  // library's settings, which are not part of Config)
  kComparedByReader,
};
const char* settingAgreementName(SettingAgreement agreement);

// The typed value of a setting: kInteger and kChoice hold int64_t, kByteSize uint64_t, kBoolean bool,
// kFraction double, kPath, kText and kLinkMask std::string.
using SettingValue = std::variant<std::int64_t, std::uint64_t, bool, double, std::string>;

struct SettingChoice {
  std::string text;    // a spelling accepted from the environment
  std::int64_t value;  // kBoolean: 1 or 0; kChoice: the enum's number
};

struct SettingSpec {
  std::string name;  // the environment variable, PEERREDUCE_...
  SettingKind kind = SettingKind::kInteger;
  SettingAgreement agreement = SettingAgreement::kLocal;
  // How messages name the value: "<noun> of <value> <unit> is outside ...".
  std::string noun;
  std::string unit;              // "ms", "bytes" or empty
  std::int64_t min_integer = 0;  // kInteger
  std::int64_t max_integer = 0;
  std::uint64_t min_bytes = 0;  // kByteSize
  std::uint64_t max_bytes = UINT64_MAX;
  std::uint64_t multiple_of = 0;              // kByteSize: 0 = any multiple
  std::string multiple_why;                   // why the multiple, shown in errors
  bool power_of_two = false;                  // kByteSize
  std::vector<SettingChoice> choices;         // kBoolean, kChoice: every accepted spelling; the first of each value is
                                              // its canonical name
  std::string choices_text;                   // kBoolean: how errors list the spellings ("1/0/true/false/on/off")
  std::size_t max_chars = 0;                  // kPath, kLinkMask: 0 = no limit
  std::optional<SettingValue> default_value;  // nullopt: unset unless given; default_note says what applies
  std::string default_note;                   // appended to the default in documentation
  std::string example;                        // a valid value other than the default, for documentation
  std::string help;                           // one line
  std::string range_hint;                     // appended to range errors ("1 = never automatically")
};

using Getenv = std::function<const char*(const char*)>;

// `text` as a value of `spec`: its grammar, then its range. kPath and kLinkMask accept the empty text
// (nothing); every other kind refuses it. Errors name the variable and the text as given.
StatusOr<SettingValue> parseSettingText(const SettingSpec& spec, std::string_view text);

// `value` (from code, or from parseSettingText) against the spec's range and kind: kInvalidArgument
// "<noun> of <value> <unit> is outside <range> (<variable>)".
Status checkSettingValue(const SettingSpec& spec, const SettingValue& value);

// The variable through `getenv` (null: the process environment). nullopt when it is unset or empty: an
// empty variable never changes a value, whatever the kind (to clear a path or the mask set in code, set
// the field in code, or prConfigSet it to "").
StatusOr<std::optional<SettingValue>> readSetting(const SettingSpec& spec, const Getenv& getenv);

// Canonical text of a value: byte sizes and integers in decimal, choices by their canonical name, booleans
// as 1 or 0, fractions in the shortest decimal form. parseSettingText reads it back as the same value.
std::string formatSettingValue(const SettingSpec& spec, const SettingValue& value);

// The default in words: "32 MiB", "30000 ms", "auto", "none", or the spec's default_note when it has no
// value ("the multiprocessor count"); a note beside a value is added in parentheses ("0 (no quota)").
std::string describeDefault(const SettingSpec& spec);

// What the setting accepts, in words: "1..86400000 (ms)", "64K..64G bytes", "auto, one-shot, ...".
std::string describeAccepted(const SettingSpec& spec);

// Whether `value` holds the alternative `spec.kind` stores.
bool settingValueHasKind(const SettingSpec& spec, const SettingValue& value);

}  // namespace peerreduce
