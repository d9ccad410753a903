// The settings registry as documentation: the text and the Markdown `peerreduce-sim settings` prints
// (its JSON is made there, with the simulator's JSON helpers), and docs/SETTINGS.md holds (the Markdown form, checked
// against the registry by ctest lib.SettingsDoc.*). Everything here is derived from config/settings_registry.h; nothing
// is written twice.
#pragma once

#include <string>

namespace peerreduce {

// One block per setting: name, kind, default, what it accepts, agreement, reader and help.
std::string settingsText();
// docs/SETTINGS.md: the rules every setting follows, then the table.
std::string settingsMarkdown();

}  // namespace peerreduce
