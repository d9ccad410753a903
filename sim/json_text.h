// JSON string literals for the peerreduce-sim reports (the allreduce run and the fault campaign).
#pragma once

#include <cstdio>
#include <string>

namespace peerreduce::sim {

// `text` as a quoted JSON string: quotes and backslashes escaped, newlines as \n, other control
// characters as \u00XX.
inline std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace peerreduce::sim
