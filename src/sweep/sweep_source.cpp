#include "lengen/sweep_source.h"

#include <filesystem>

#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

using ordered_json = nlohmann::ordered_json;

// "KEY=VALUE" split at its first '='; `option` names it in the message when it has none.
std::pair<std::string, std::string> key_and_text(const std::string& assignment, const std::string& option) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == assignment.size()) {
    throw UserError(option + " " + assignment + ": expected KEY=VALUE" +
                    (option == "--grid" ? "1,VALUE2,..." : ""));
  }
  return {assignment.substr(0, equals), assignment.substr(equals + 1)};
}

// "1,2" -> "1", "2"; "[16,32],[64]" -> "[16,32]", "[64]": a comma inside brackets, braces or a
// quoted string belongs to one value.
std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> values(1);
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '\\' && i + 1 < text.size()) {
      values.back() += {c, text[++i]};
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      values.emplace_back();
    } else {
      values.back() += c;
    }
  }
  return values;
}

ordered_json typed(const std::string& key, const std::string& text) {
  return ordered_json::parse(override_json(key, text).dump());
}

// The --sets as a sweep's "set" object; a key given twice is refused (which one was meant?).
ordered_json set_object(const std::vector<std::string>& sets, ordered_json set) {
  ordered_json given = ordered_json::object();
  for (const std::string& assignment : sets) {
    const auto [key, text] = key_and_text(assignment, "--set");
    if (given.contains(key)) throw UserError("--set " + key + " is given twice; give it once");
    given[key] = typed(key, text);
    set[key] = given[key];
  }
  return set;
}

ordered_json grid_object(const std::vector<std::string>& grids) {
  ordered_json grid = ordered_json::object();
  for (const std::string& assignment : grids) {
    const auto [key, text] = key_and_text(assignment, "--grid");
    if (grid.contains(key)) throw UserError("--grid " + key + " is given twice; list all its values in one");
    ordered_json values = ordered_json::array();
    for (const std::string& value : split_values(text)) {
      if (value.empty())
        throw UserError("--grid " + assignment + ": an empty value (two commas, or one at an end)");
      values.push_back(typed(key, value));
    }
    grid[key] = values;
  }
  return grid;
}

std::string command_line_text(const SweepSource& source) {
  std::string text = "lengen sweep --base " + source.base;
  for (const std::string& grid : source.grid) text += " --grid " + grid;
  for (const std::string& set : source.set) text += " --set " + set;
  return text;
}

}  // namespace

ordered_json sweep_json_of(const SweepSource& source) {
  if (source.path.empty() == source.base.empty())
    throw UserError("lengen sweep: give a sweep file or --base CONFIG (one of them)");
  if (!source.path.empty()) {
    if (!source.grid.empty()) throw UserError("--grid goes with --base, not with a sweep file");
    ordered_json json = read_ordered_json_file(source.path);
    if (!source.set.empty() && json.is_object()) {
      ordered_json set = json.contains("set") ? json["set"] : ordered_json::object();
      if (!set.is_object()) return json;  // refused as the file's own mistake when it is expanded
      json["set"] = set_object(source.set, set);
    }
    return json;
  }
  if (!fs::is_regular_file(source.base)) throw UserError("--base " + source.base + ": no such config file");
  ordered_json json = ordered_json::object();
  json["description"] = "from the command line: " + command_line_text(source);
  json["base"] = fs::absolute(source.base).lexically_normal().string();
  if (!source.grid.empty()) json["grid"] = grid_object(source.grid);
  if (!source.set.empty()) json["set"] = set_object(source.set, ordered_json::object());
  return json;
}

Sweep load_sweep(const SweepSource& source) {
  const ordered_json json = sweep_json_of(source);
  std::vector<std::string> typed;  // the --set keys, whose train.steps scales a run's schedule
  for (const std::string& assignment : source.set) typed.push_back(key_and_text(assignment, "--set").first);
  if (!source.path.empty())
    return load_sweep_json(json, fs::path(source.path).parent_path().string(), source.path, typed);
  return load_sweep_json(json, ".", "lengen sweep --base " + source.base, typed);
}

}  // namespace lengen
