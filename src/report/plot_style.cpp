#include "plot_style.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "lengen/json_file.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// Okabe and Ito's colours, told apart also by readers with colour-blindness; black after them,
// and then again from the start.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr size_t kPaletteSize = sizeof kPalette / sizeof kPalette[0];

// "16", or "8-16" for values that differ between runs.
std::string span_text(const std::set<int64_t>& values) {
  if (values.empty()) return "";
  const int64_t low = *values.begin(), high = *values.rbegin();
  return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
}

struct RunFacts {
  std::set<std::string> tasks;
  std::set<int64_t> len_min, len_max, steps, seeds;
};

void read_facts(const RunResults& run, RunFacts& facts) {
  const fs::path path = fs::path(run.dir) / "config.json";
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return;
  nlohmann::json config;
  try {
    config = read_json_file(path.string());
  } catch (const std::exception&) {
    return;  // named where the run is read
  }
  const auto add = [&](std::set<int64_t>& into, const char* pointer) {
    const nlohmann::json::json_pointer key(pointer);
    if (config.contains(key) && config.at(key).is_number_integer())
      into.insert(config.at(key).get<int64_t>());
  };
  if (config.contains("/task/name"_json_pointer) && config.at("/task/name"_json_pointer).is_string())
    facts.tasks.insert(config.at("/task/name"_json_pointer).get<std::string>());
  add(facts.len_min, "/task/len_min");
  add(facts.len_max, "/task/len_max");
  add(facts.steps, "/train/steps");
  add(facts.seeds, "/train/seed");
}

std::string title_of(const RunFacts& facts) {
  std::string title;
  for (const std::string& task : facts.tasks) title += (title.empty() ? "" : " + ") + task;
  if (!facts.len_min.empty() && !facts.len_max.empty()) {
    const std::string low = span_text(facts.len_min), high = span_text(facts.len_max);
    const bool one_range = facts.len_min.size() == 1 && facts.len_max.size() == 1;
    title += low == high ? ", trained on length " + low
                         : ", trained on lengths " + low + (one_range ? "-" : " to ") + high;
  }
  if (!facts.steps.empty()) title += ", " + span_text(facts.steps) + " steps";
  if (!facts.seeds.empty())
    title += ", " + std::to_string(facts.seeds.size()) + (facts.seeds.size() == 1 ? " seed" : " seeds");
  return title.rfind(", ", 0) == 0 ? title.substr(2) : title;
}

}  // namespace

PlotAxes report_plot_style(const std::vector<RunResults>& runs, int64_t train_len_max) {
  PlotAxes style;
  RunFacts facts;
  for (const RunResults& run : runs) {
    read_facts(run, facts);
    const std::string label = group_label(run.group);
    if (std::find(style.colour_keys.begin(), style.colour_keys.end(), label) == style.colour_keys.end())
      style.colour_keys.push_back(label);
  }
  style.title = title_of(facts);
  style.train_length = train_len_max;
  return style;
}

std::string line_colour(const std::string& label, const std::vector<std::string>& keys) {
  const auto found = std::find(keys.begin(), keys.end(), label);
  // A label outside the keys gets a colour from its text, the same on every machine.
  size_t index = static_cast<size_t>(found - keys.begin());
  if (found == keys.end()) {
    index = 0;
    for (unsigned char c : label) index = index * 31 + c;
  }
  return kPalette[index % kPaletteSize];
}

}  // namespace lengen
