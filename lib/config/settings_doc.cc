#include "config/settings_doc.h"

#include "config/settings_registry.h"

namespace peerreduce {
namespace {

// The rules every setting follows (util/setting_spec.h, settings_registry.h), as the documentation states
// them before the table.
constexpr const char* kRules = R"(Every setting is a `PEERREDUCE_*` environment variable.

- **Where it is read.** The `Config` and `Config::memory` settings by `Config::fromEnvironment` (C++), by
  `prConfigInit` and by a communicator created with a NULL `prConfig_t` (C); a variable overrides what code
  set. The GPU transport reads its own when it is created, the logger `PEERREDUCE_DEBUG` at its first line.
  The NCCL-compatible library (libpeerreduce_nccl.so, docs/NCCL.md) reads `PEERREDUCE_NCCL_LIB` when it first
  loads NCCL and the other `PEERREDUCE_NCCL_*` settings whenever it creates a communicator.
- **From C.** `prConfig_t` has a field for every `Config` setting; `prConfigSet(&config, "PEERREDUCE_POOL_BYTES",
  "128M")` and `prConfigGet` take the variable's name and text, parsed and checked as the variable is. A
  communicator created with a `prConfig_t` from `prConfigInit` means what one created with NULL means.
- **Unset and empty.** A variable that is unset, or set to the empty text, leaves the value from code (or the
  default) unchanged, for every setting: `PEERREDUCE_LINK_MASK=` does not clear a mask set in code.
- **Errors.** A malformed or out-of-range value fails with `kInvalidArgument` naming the variable, the value
  as given and what is accepted (the logger warns and keeps WARN instead).
- **Timeouts.** `PEERREDUCE_TIMEOUT_MS` bounds every wait of an operation. Waits for the other ranks in a
  bootstrap exchange (creation, buffer registration) follow ranks still preparing, so they take the larger
  of it and `PEERREDUCE_BOOTSTRAP_TIMEOUT_MS` (10 s unless set): `PEERREDUCE_TIMEOUT_MS=1` is a valid setting
  and no longer fails creation. On the simulator `synchronize` is a collective of the rank threads in real
  time, bounded by `PEERREDUCE_TIMEOUT_MS` itself: there, keep it above the time the slowest rank thread
  takes to reach `synchronize`.
- **Byte sizes** are `1048576`, `64K`, `32M`, `32MiB`, `1G` or `1GiB` (powers of 1024).
- **Ranks agree.** *checked*: part of the configuration fingerprint; ranks whose values differ fail creation
  with `kMismatch`. *checked by its reader*: not part of `Config`, compared by the layer that reads it when it
  creates a communicator, with the same `kMismatch`. *unchecked*: every rank must give the same value, but
  nothing compares them. *no*: each rank may differ.
)";

// A Markdown table cell: '|' would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string settingsText() {
  std::string out;
  for (const SettingRow& row : settingRows()) {
    const SettingSpec& s = *row.spec;
    out += s.name + "\n    " + s.help + "\n    kind " + settingKindName(s.kind) + "; default " + describeDefault(s) +
           "; accepts " + describeAccepted(s) + "\n    ranks agree: " + settingAgreementName(s.agreement) +
           "; read by " + settingOwnerName(row.owner) + "; example " + s.example + "\n";
  }
  return out;
}

std::string settingsMarkdown() {
  std::string out =
      "# Settings\n\n"
      "<!-- Generated from the settings registry (lib/config/settings_registry.cc) by\n"
      "     `peerreduce-sim settings --markdown`; edit the registry, not this file. ctest lib.SettingsDoc.* fails\n"
      "     when the two differ. Regenerate with:\n"
      "     build/default/sim/peerreduce-sim settings --markdown > docs/SETTINGS.md -->\n\n";
  out += kRules;
  out += "\n| variable | meaning | kind | default | accepted | ranks agree | read by |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (const SettingRow& row : settingRows()) {
    const SettingSpec& s = *row.spec;
    out += "| `" + s.name + "` | " + cell(s.help) + " | " + settingKindName(s.kind) + " | " + cell(describeDefault(s)) +
           " | " + cell(describeAccepted(s)) + " | " + settingAgreementName(s.agreement) + " | " +
           settingOwnerName(row.owner) + " |\n";
  }
  return out;
}

}  // namespace peerreduce
