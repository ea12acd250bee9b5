#pragma once
// Lookups shared by the registries of the pluggable axes: vectors of entries with a `name`.
#include <algorithm>
#include <string>
#include <vector>

#include "lengen/errors.h"

namespace lengen {

// An entry of an axis whose choices are kinds of one class: name, help, keys read and kind.
template <class Kind>
struct KindEntry {
  std::string name;
  std::string help;
  std::vector<std::string> parameters;
  Kind kind;
};

template <class Entry>
std::vector<std::string> entry_names(const std::vector<Entry>& entries) {
  std::vector<std::string> names;
  for (const Entry& entry : entries) names.push_back(entry.name);
  return names;
}

// The entry named `name`, or nullptr.
template <class Entry>
const Entry* find_entry(const std::vector<Entry>& entries, const std::string& name) {
  for (const Entry& entry : entries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// The entry named `name`; UserError "unknown `what` 'name' (did you mean ...)" otherwise.
template <class Entry>
const Entry& entry_named(const std::vector<Entry>& entries, const std::string& what,
                         const std::string& name) {
  const Entry* entry = find_entry(entries, name);
  if (entry == nullptr) throw UserError(unknown_name_message(what, name, entry_names(entries)));
  return *entry;
}

// The names of the entries that read `parameter`.
template <class Entry>
std::vector<std::string> names_reading(const std::vector<Entry>& entries, const std::string& parameter) {
  std::vector<std::string> names;
  for (const Entry& entry : entries) {
    if (std::find(entry.parameters.begin(), entry.parameters.end(), parameter) != entry.parameters.end()) {
      names.push_back(entry.name);
    }
  }
  return names;
}

// "a, b, c": names as the config reference and messages list them.
inline std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace lengen
