#include "lengen/json_notes.h"

namespace lengen {

namespace {

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

void collect_notes(const Json& read, const Json& own, const Pointer& at, Json& notes) {
  if (read.is_object() && own.is_object()) {
    for (const auto& [key, value] : read.items()) {
      const Pointer inner = at / key;
      if (!own.contains(key)) {
        notes[inner.to_string()] = value;
      } else {
        collect_notes(value, own.at(key), inner, notes);
      }
    }
  } else if (read.is_array() && own.is_array() && read.size() == own.size()) {
    for (size_t i = 0; i < read.size(); ++i) collect_notes(read[i], own[i], at / i, notes);
  }
}

}  // namespace

Json notes_beside(const Json& read, const Json& own) {
  Json notes = Json::object();
  collect_notes(read, own, Pointer(), notes);
  return notes;
}

std::string note_name(const std::string& pointer) {
  std::vector<std::string> tokens;
  for (Pointer at(pointer); !at.empty(); at.pop_back()) tokens.insert(tokens.begin(), at.back());
  std::string name;
  for (const std::string& token : tokens) name += (name.empty() ? "" : ".") + token;
  return name;
}

std::vector<std::string> put_notes_back(Json& json, const Json& notes) {
  std::vector<std::string> moved;
  for (const auto& [text, value] : notes.items()) {
    const Pointer at(text);
    if (at.empty()) continue;
    const Pointer parent = at.parent_pointer();
    const std::string key = at.back();
    if (json.contains(parent) && json.at(parent).is_object() && !json.at(parent).contains(key)) {
      json.at(parent)[key] = value;
      continue;
    }
    const std::string name = note_name(text);
    std::string free_name = name;
    for (int number = 2; json.contains(free_name); ++number)
      free_name = name + " (" + std::to_string(number) + ")";
    json[free_name] = value;
    moved.push_back(name + " -> \"" + free_name + "\"");
  }
  return moved;
}

}  // namespace lengen
