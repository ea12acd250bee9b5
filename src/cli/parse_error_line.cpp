#include "parse_error_line.h"

#include <algorithm>
#include <vector>

#include "lengen/errors.h"

namespace lengen::cli {

namespace {

// The names of a command's subcommands.
std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(command->get_name());
  }
  return names;
}

// "unknown command 'x' (did you mean 'y'?); commands: a, b"; `of` names the command it belongs to.
std::string unknown_command(const std::string& word, const std::string& of,
                            const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  const std::string suggestion = closest_match(word, names);
  return "unknown " + of + "command '" + word + "'" +
         (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") + "; commands: " + list;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::string parse_error_line(CLI::App& app, int argc, char** argv, const CLI::ParseError& error) {
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string word = argv[1];
    const std::vector<std::string> names = subcommand_names(app);
    if (std::find(names.begin(), names.end(), word) == names.end()) return unknown_command(word, "", names);
    // `lengen bench bogus`: CLI11 says only that a subcommand is required.
    CLI::App* command = app.get_subcommand(word);
    const std::vector<std::string> inner = subcommand_names(*command);
    if (argc >= 3 && argv[2][0] != '-' && !inner.empty() &&
        std::find(inner.begin(), inner.end(), std::string(argv[2])) == inner.end()) {
      return unknown_command(argv[2], "lengen " + word + " ", inner);
    }
    return one_line(error.what()) + " (see lengen " + word + " --help)";
  }
  return one_line(error.what()) + " (see lengen --help)";
}

}  // namespace lengen::cli
