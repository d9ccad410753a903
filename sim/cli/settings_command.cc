#include "cli/settings_command.h"

#include <cstdio>

#include "cli/cli_run.h"
#include "config/settings_doc.h"
#include "config/settings_registry.h"
#include "json_text.h"

namespace peerreduce::sim {
namespace {

constexpr const char* kSettingsUsage =
    "usage: peerreduce-sim settings [--json | --markdown]\n"
    "Prints every PEERREDUCE_* setting: its kind, default, accepted values, whether ranks must agree, and\n"
    "what reads it. --markdown prints docs/SETTINGS.md; --json one JSON object.\n";

// {"settings":[{"name":..., "kind":..., "default":..., "default_text":..., "accepted":..., "agreement":...,
//  "read_by":..., "example":..., "help":...}, ...]}; "default" is the canonical text, or null when unset.
std::string settingsJson() {
  std::string out = "{\"settings\":[";
  bool first = true;
  for (const SettingRow& row : settingRows()) {
    const SettingSpec& s = *row.spec;
    out += first ? "{" : ",{";
    first = false;
    out += "\"name\":" + jsonString(s.name) + ",\"kind\":" + jsonString(settingKindName(s.kind)) +
           ",\"default\":" + (s.default_value ? jsonString(formatSettingValue(s, *s.default_value)) : "null") +
           ",\"default_text\":" + jsonString(describeDefault(s)) + ",\"accepted\":" + jsonString(describeAccepted(s)) +
           ",\"agreement\":" + jsonString(settingAgreementName(s.agreement)) +
           ",\"read_by\":" + jsonString(settingOwnerName(row.owner)) + ",\"example\":" + jsonString(s.example) +
           ",\"help\":" + jsonString(s.help) + "}";
  }
  return out + "]}\n";
}

}  // namespace

int settingsMain(const std::vector<std::string>& args) {
  enum class Form { kText, kJson, kMarkdown } form = Form::kText;
  for (const std::string& arg : args) {
    if (arg == "--json") {
      form = Form::kJson;
    } else if (arg == "--markdown") {
      form = Form::kMarkdown;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kSettingsUsage);
      return kExitOk;
    } else {
      std::fprintf(stderr, "peerreduce-sim settings: unknown option '%s'\n%s", arg.c_str(), kSettingsUsage);
      return kExitBadInput;
    }
  }
  const std::string out = form == Form::kJson       ? settingsJson()
                          : form == Form::kMarkdown ? settingsMarkdown()
                                                    : settingsText();
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace peerreduce::sim
