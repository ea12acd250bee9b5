#include "lengen/sweep.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "lengen/comparable_config.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/task.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kNameKey = "name";

nlohmann::json plain(const ordered_json& value) { return nlohmann::json::parse(value.dump()); }

std::string sanitize(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return text;
}

// A run's folder is OUT/NAME: a name that is empty, "." or ".." or holds a slash would put it
// elsewhere, and `--force` on it would delete the sweep folder or its parent.
bool is_plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// One choice on an axis or one list entry, as the part of a run it adds: its name component,
// its overrides, and whether the user named it.
using Choice = SweepRun;

std::vector<SweepOverride> overrides_of(const ordered_json& object, const std::string& where) {
  if (!object.is_object()) throw UserError(where + ": expected an object of \"key.path\": value overrides");
  std::vector<SweepOverride> overrides;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() != kNameKey) overrides.emplace_back(it.key(), plain(it.value()));
  }
  return overrides;
}

Choice choice_of(const std::string& key, const ordered_json& value, const std::string& where) {
  if (!value.is_object()) return {override_name(key, plain(value)), {{key, plain(value)}}};
  Choice choice{"", overrides_of(value, where)};
  if (value.contains(kNameKey)) {
    if (!value[kNameKey].is_string()) throw UserError(where + ": \"name\" must be a string");
    const std::string name = value[kNameKey].get<std::string>();
    if (!is_plain_name(name)) {
      throw UserError(where + ": \"name\" " + plain(value[kNameKey]).dump() +
                      " must be one plain folder name (not empty, '.' or '..', no '/')");
    }
    choice.name = sanitize(name);
    choice.named = true;
  } else {
    for (const auto& [k, v] : choice.overrides)
      choice.name += (choice.name.empty() ? "" : "-") + override_name(k, v);
  }
  return choice;
}

// Appends "-2", "-3", ... to names made from settings and seen before; a name the user gave is
// never changed, so two runs that would share a folder because of one are refused.
void make_names_unique(std::vector<SweepRun>& runs, const std::string& source) {
  std::map<std::string, bool> named;  // each name taken -> whether the user gave it
  for (const auto& run : runs) {
    const auto [first, fresh] = named.emplace(run.name, run.named);
    if (!fresh && (run.named || first->second)) {
      throw UserError(source + ": two runs get the folder name '" + run.name +
                      "'; give them names that differ as folder names (letters, digits, "
                      "'.', '_' and '-' are kept, anything else becomes '_')");
    }
  }
  std::map<std::string, int> seen;
  for (auto& run : runs) {
    if (++seen[run.name] == 1) continue;
    std::string candidate;
    for (int k = seen[run.name]; named.count(candidate = run.name + "-" + std::to_string(k)) > 0;) ++k;
    named.emplace(candidate, false);
    run.name = candidate;
  }
}

// Sets "a.b.c" inside a config object; an object value is merged into an existing section.
void set_path(nlohmann::json& config, const std::string& key, const nlohmann::json& value) {
  nlohmann::json* node = &config;
  size_t start = 0;
  for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', start)) {
    node = &(*node)[key.substr(start, dot - start)];
    if (!node->is_object()) *node = nlohmann::json::object();
    start = dot + 1;
  }
  nlohmann::json& leaf = (*node)[key.substr(start)];
  if (value.is_object() && leaf.is_object()) {
    leaf.merge_patch(value);
  } else {
    leaf = value;
  }
}

// A key set twice in one run (by "set" and an axis, by two axes, by its path and in its section's
// object): the later value would win while the run's name may carry the earlier one.
void check_each_key_set_once(const SweepRun& run, const std::string& source) {
  std::map<std::string, std::string> seen;  // key -> the setting that sets it
  for (const auto& [key, value] : run.overrides) {
    std::vector<std::string> keys = keys_set_by(key, value);
    if (keys.empty()) keys = {key};
    for (const std::string& one : keys) {
      const auto [it, fresh] = seen.emplace(one, key + "=" + value.dump());
      if (!fresh) {
        throw UserError(source + ": run '" + run.name + "' sets " + one + " twice (" + it->second +
                        ", then " + key + "=" + value.dump() +
                        "); set each key in one place (set, one grid axis or one list entry)");
      }
    }
  }
}

void check_sweep_keys(const ordered_json& json, const std::string& source) {
  if (!json.is_object()) throw UserError(source + ": a sweep must be a JSON object");
  static const std::set<std::string> kKeys = {"description", "base", "grid", "list", "set"};
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (kKeys.count(it.key())) continue;
    // A run's config given where a sweep file goes.
    const bool run_config = std::set<std::string>{"task", "model", "train", "eval"}.count(it.key()) > 0;
    throw UserError(
        source + ": unknown key '" + it.key() + "' (expected description, base, grid, list, set)" +
        (run_config ? "; a run config: train it with lengen train, or sweep it with --base" : ""));
  }
}

// The sweep's "base": a config file (relative to `base_dir`) or an inline config.
nlohmann::json base_config(const ordered_json& json, const std::string& base_dir, const std::string& source) {
  if (!json.contains("base"))
    throw UserError(source + ": missing \"base\" (a config path or an inline config)");
  const auto& base = json["base"];
  if (base.is_object()) return plain(base);
  if (!base.is_string())
    throw UserError(source + ": \"base\" must be a config path or an inline config object");
  fs::path path = base.get<std::string>();
  if (path.is_relative()) path = fs::path(base_dir) / path;
  nlohmann::json config = read_json_file(path.string());
  // Named as what it is: otherwise each run of this sweep is "a sweep file" in its message.
  if (config.is_object() && config.contains("base") && (config.contains("grid") || config.contains("list"))) {
    throw UserError(path.string() + " (the base of " + source +
                    ") is a sweep file, not a config: a sweep's base is one run's config");
  }
  return config;
}

// A choice's settings added to a run, and its name component to the run's name.
void add_choice(SweepRun& run, const Choice& choice) {
  if (!choice.name.empty()) run.name += (run.name.empty() ? "" : "-") + choice.name;
  run.named = run.named || choice.named;
  run.overrides.insert(run.overrides.end(), choice.overrides.begin(), choice.overrides.end());
}

// The runs of "grid": the cartesian product of its axes, the first axis outermost.
std::vector<SweepRun> grid_runs(const ordered_json& json, const std::vector<SweepOverride>& common,
                                const std::string& source) {
  if (!json.contains("grid")) return {};
  const auto& grid = json["grid"];
  if (!grid.is_object()) throw UserError(source + ": \"grid\" must be an object of \"key.path\": [values]");
  std::vector<std::vector<Choice>> axes;
  for (auto it = grid.begin(); it != grid.end(); ++it) {
    const std::string where = source + ": grid \"" + it.key() + "\"";
    if (!it.value().is_array() || it.value().empty()) throw UserError(where + " must be a non-empty list");
    std::vector<Choice> axis;
    for (const auto& value : it.value()) axis.push_back(choice_of(it.key(), value, where));
    axes.push_back(std::move(axis));
  }
  std::vector<SweepRun> runs;
  if (axes.empty()) return runs;
  // An odometer over the axes.
  std::vector<size_t> digits(axes.size(), 0);
  while (true) {
    SweepRun run{"", common};
    for (size_t a = 0; a < axes.size(); ++a) add_choice(run, axes[a][digits[a]]);
    runs.push_back(std::move(run));
    size_t a = axes.size();
    while (a > 0 && ++digits[a - 1] == axes[a - 1].size()) digits[--a] = 0;
    if (a == 0) return runs;
  }
}

// The runs of "list", one per entry.
std::vector<SweepRun> list_runs(const ordered_json& json, const std::vector<SweepOverride>& common,
                                const std::string& source) {
  if (!json.contains("list")) return {};
  if (!json["list"].is_array() || json["list"].empty()) {
    throw UserError(source + ": \"list\" must be a non-empty list of override objects");
  }
  std::vector<SweepRun> runs;
  for (size_t i = 0; i < json["list"].size(); ++i) {
    const std::string where = source + ": list entry " + std::to_string(i);
    if (!json["list"][i].is_object()) throw UserError(where + " must be an object of overrides");
    SweepRun run{"", common};
    add_choice(run, choice_of("", json["list"][i], where));
    runs.push_back(std::move(run));
  }
  return runs;
}

// Two runs that resolve to one config (train.seed 1 and 1.0, a default written out, an alpha that
// softmax does not read) are one model trained twice, which the report would count as two seeds.
void check_runs_differ(const Sweep& sweep, const std::string& source) {
  std::map<std::string, std::string> first_with;  // resolved config (no description) -> run name
  for (const SweepRun& run : sweep.runs) {
    nlohmann::json resolved;
    try {
      resolved = comparable_config_json(run_config(sweep, run));
    } catch (const UserError&) {
      continue;
    }
    resolved.erase("description");
    const auto [earlier, added] = first_with.emplace(resolved.dump(), run.name);
    if (!added) {
      throw UserError(source + ": runs '" + earlier->second + "' and '" + run.name +
                      "' train the same config (their settings differ only in how they are written, or "
                      "not at all), which the report would count as two seeds; remove one, or set a key "
                      "that tells them apart");
    }
  }
}

}  // namespace

std::string override_name(const std::string& key, const nlohmann::json& value) {
  const std::string last = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
  if (value.is_string()) return sanitize(value.get<std::string>());
  if (value.is_boolean()) return sanitize(last + "-" + value.dump());
  if (value.is_array()) {
    std::string joined;
    for (const auto& item : value)
      joined += (joined.empty() ? "" : "_") + (item.is_string() ? item.get<std::string>() : item.dump());
    return sanitize(last + joined);
  }
  return sanitize(last + value.dump());
}

Sweep sweep_from_json(const ordered_json& json, const std::string& base_dir, const std::string& source,
                      const std::vector<std::string>& command_line_set) {
  check_sweep_keys(json, source);
  Sweep sweep;
  sweep.command_line_set = command_line_set;
  sweep.description = json.value("description", "");
  sweep.base = base_config(json, base_dir, source);
  std::vector<SweepOverride> common;
  if (json.contains("set")) common = overrides_of(json["set"], source + ": \"set\"");
  sweep.runs = grid_runs(json, common, source);
  for (SweepRun& run : list_runs(json, common, source)) sweep.runs.push_back(std::move(run));
  if (sweep.runs.empty()) sweep.runs.push_back({"", common});
  for (auto& run : sweep.runs) {
    if (run.name.empty()) run.name = "run";
    check_each_key_set_once(run, source);
  }
  make_names_unique(sweep.runs, source);
  check_runs_differ(sweep, source);
  return sweep;
}

Config run_config(const Sweep& sweep, const SweepRun& run, std::string* scaled) {
  nlohmann::json merged = sweep.base, as_written = sweep.base;
  std::set<std::string> command_line_keys;
  for (const auto& [key, value] : run.overrides) {
    set_path(merged, key, value);
    const auto& typed = sweep.command_line_set;
    if (std::find(typed.begin(), typed.end(), key) == typed.end()) {
      set_path(as_written, key, value);
    } else {
      for (const std::string& leaf : keys_set_by(key, value)) command_line_keys.insert(leaf);
    }
  }
  const std::string source = "sweep run " + run.name;
  // A run's config.json describes the run: the sweep's description (its base's if it has none), named.
  const auto sets_description = [](const auto& override) { return override.first == "description"; };
  if (std::none_of(run.overrides.begin(), run.overrides.end(), sets_description))
    merged["description"] = description_changed_by(
        sweep.description.empty() ? sweep.base.value("description", "") : sweep.description, source);
  Config config = config_from_json_with_overrides(merged, as_written, command_line_keys, source, scaled);
  try {
    make_task(config.task.name, config.task.params, config.task.seed);
  } catch (const UserError& e) {
    throw UserError(source + ": " + e.what());
  }
  return config;
}

std::vector<size_t> shard_runs(size_t total, const std::string& shard) {
  long long index = 0, count = 0;
  char rest = 0;
  if (std::sscanf(shard.c_str(), "%lld/%lld%c", &index, &count, &rest) != 2)
    throw UserError("--shard " + shard + ": expected i/N, e.g. 0/4");
  if (count < 1 || index < 0 || index >= count) throw UserError("--shard " + shard + ": need 0 <= i < N");
  std::vector<size_t> indices;
  for (auto i = static_cast<size_t>(index); i < total; i += static_cast<size_t>(count)) indices.push_back(i);
  return indices;
}

nlohmann::json sweep_manifest(const Sweep& sweep) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : sweep.runs) {
    nlohmann::json overrides = nlohmann::json::object();
    for (const auto& [key, value] : run.overrides) overrides[key] = value;
    runs.push_back({{"name", run.name}, {"overrides", overrides}});
  }
  return {{"description", sweep.description}, {"runs", runs}};
}

namespace {

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
// quoted string belongs to one value. `assignment` names the --grid whose bracket is left open.
std::vector<std::string> split_values(const std::string& text, const std::string& assignment) {
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
  if (depth != 0 || quoted)
    throw UserError("--grid " + assignment + ": a bracket, brace or quote is left open (or closed twice)");
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
    for (const std::string& value : split_values(text, assignment)) {
      if (value.empty())
        throw UserError("--grid " + assignment + ": an empty value (two commas, or one at an end)");
      if (value.front() == '{' && !ordered_json::accept(value))
        throw UserError("--grid " + key + ": " + value + " is not a JSON object (a brace or quote missing?)");
      values.push_back(typed(key, value));
    }
    grid[key] = values;
  }
  return grid;
}

// The sweep file `source` stands for.
ordered_json sweep_json_of(const SweepSource& source) {
  if (source.path.empty() == source.base.empty())
    throw UserError("lengen sweep: give a sweep file or --base CONFIG (one of them)");
  if (!source.path.empty()) {  // (the command line takes --grid only with --base)
    ordered_json json = read_ordered_json_file(source.path);
    if (!source.set.empty() && json.is_object()) {
      ordered_json set = json.contains("set") ? json["set"] : ordered_json::object();
      if (!set.is_object()) return json;  // refused as the file's own mistake when it is expanded
      json["set"] = set_object(source.set, set);
    }
    return json;
  }
  ordered_json json = ordered_json::object();
  std::string typed = "lengen sweep --base " + shell_word(source.base);
  for (const std::string& grid : source.grid) typed += " --grid " + shell_word(grid);
  for (const std::string& set : source.set) typed += " --set " + shell_word(set);
  json["description"] = "from the command line: " + typed;
  json["base"] = fs::absolute(source.base).lexically_normal().string();
  if (!source.grid.empty()) json["grid"] = grid_object(source.grid);
  if (!source.set.empty()) json["set"] = set_object(source.set, ordered_json::object());
  return json;
}

}  // namespace

Sweep load_sweep(const SweepSource& source) {
  const ordered_json json = sweep_json_of(source);
  std::vector<std::string> typed;  // the --set keys, whose train.steps scales a run's schedule
  for (const std::string& assignment : source.set) typed.push_back(key_and_text(assignment, "--set").first);
  if (!source.path.empty())
    return sweep_from_json(json, fs::path(source.path).parent_path().string(), source.path, typed);
  return sweep_from_json(json, ".", "lengen sweep --base " + source.base, typed);
}

}  // namespace lengen
