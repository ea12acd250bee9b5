#include "parse_error_line.h"

#include <algorithm>
#include <vector>

#include "lengen/errors.h"

namespace lengen::cli {

namespace {

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string parse_error_line(CLI::App& app, int argc, char** argv, const CLI::ParseError& error) {
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string word = argv[1];
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(command->get_name());
    }
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::string list;
      for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
      const std::string suggestion = closest_match(word, names);
      return "unknown command '" + word + "'" + (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
             "; commands: " + list;
    }
    return one_line(error.what()) + " (see lengen " + word + " --help)";
  }
  return one_line(error.what()) + " (see lengen --help)";
}

}  // namespace lengen::cli
