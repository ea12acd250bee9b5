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

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// CLI11's message on one line, in lengen's words where CLI11's would mislead: an empty path is
// reported as a missing one ("Directory does not exist: "), an option given twice as a count.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  for (const char* missing : {"Directory does not exist:", "File does not exist:", "Path does not exist:"}) {
    if (ends_with(text, missing))
      return text.substr(0, text.size() - std::string(missing).size()) + "the path is empty";
  }
  const std::string twice = "At Most 1 required but received ";
  if (const size_t at = text.find(twice); at != std::string::npos) {
    return text.substr(0, at) + "given " + text.substr(at + twice.size()) + " times; give it once";
  }
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
