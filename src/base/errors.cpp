#include "lengen/errors.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "lengen/named_entries.h"

namespace lengen {

namespace {

// Case is not counted: "NoPE" is a miss for "nope" by its case alone.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string printable(const std::string& text) {
  std::string shown;
  shown.reserve(text.size());
  for (unsigned char byte : text) {
    if (byte >= 0x20 && byte != 0x7f) {
      shown += static_cast<char>(byte);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    }
  }
  return shown;
}

std::string shell_word(const std::string& text) {
  const char* plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%";
  if (!text.empty() && text.find_first_not_of(plain) == std::string::npos) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string unknown_name_message(const std::string& what, const std::string& name,
                                 const std::vector<std::string>& known) {
  std::string message = "unknown " + what + " '" + name + "'";
  const std::string suggestion = closest_match(name, known);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  return message + "; known: " + joined_names(known);
}

}  // namespace lengen
