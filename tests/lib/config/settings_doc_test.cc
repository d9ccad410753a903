// The settings' documentation is generated from the registry: docs/SETTINGS.md must be exactly what
// `peerreduce-sim settings --markdown` prints, and every form names every setting.
#include "config/settings_doc.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config/settings_registry.h"

namespace peerreduce {
namespace {

TEST(SettingsDoc, CommittedDocumentIsWhatTheRegistryGenerates) {
  const std::string path = std::string(PEERREDUCE_SOURCE_DIR) + "/docs/SETTINGS.md";
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "cannot read " << path;
  std::stringstream committed;
  committed << file.rdbuf();
  EXPECT_TRUE(committed.str() == settingsMarkdown())
      << path << " differs from the settings registry; regenerate it with\n"
      << "  build/default/sim/peerreduce-sim settings --markdown > docs/SETTINGS.md\n"
      << "and commit the result.";
}

TEST(SettingsDoc, EveryFormNamesEverySettingWithItsDefault) {
  const std::string text = settingsText();
  const std::string markdown = settingsMarkdown();
  for (const SettingRow& row : settingRows()) {
    const SettingSpec& s = *row.spec;
    EXPECT_NE(text.find(s.name + "\n"), std::string::npos) << s.name;
    EXPECT_NE(markdown.find("| `" + s.name + "` | " + s.help), std::string::npos) << s.name;
    EXPECT_NE(markdown.find("| " + describeDefault(s) + " |"), std::string::npos) << s.name;
  }
}

}  // namespace
}  // namespace peerreduce
