// `peerreduce-sim settings [--json | --markdown]`: every PEERREDUCE_* setting from the settings registry
// (lib/config/settings_registry.h), as text, JSON or the Markdown of docs/SETTINGS.md.
#pragma once

#include <string>
#include <vector>

namespace peerreduce::sim {

// `args` are the words after "settings". Exit status: 0 printed, 2 bad option (usage on stderr).
int settingsMain(const std::vector<std::string>& args);

}  // namespace peerreduce::sim
