#include "parse_error_line.h"

#include <algorithm>
#include <vector>

#include "lengen/errors.h"

namespace lengen::cli {

std::string parse_error_line(CLI::App& app, int argc, char** argv, const CLI::ParseError& error) {
  // The command typed, as deep as it names real ones; a word that names none where one is needed
  // is the mistake (CLI11 says only that a subcommand is required).
  CLI::App* command = &app;
  std::string typed = "lengen";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    std::vector<std::string> names;
    for (const CLI::App* sub : command->get_subcommands([](CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    if (names.empty()) break;
    if (std::find(names.begin(), names.end(), argv[i]) == names.end()) {
      const std::string suggestion = closest_match(argv[i], names);
      std::string list;
      for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
      return "unknown " + (command == &app ? "" : typed + " ") + "command '" + argv[i] + "'" +
             (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") + "; commands: " + list;
    }
    command = command->get_subcommand(argv[i]);
    typed += " " + std::string(argv[i]);
  }
  // CLI11's message on one line, in lengen's words where CLI11's would mislead: an empty path is
  // reported as a missing one ("Directory does not exist: "), an option given twice as a count.
  std::string text = error.what();
  std::replace(text.begin(), text.end(), '\n', ' ');
  text.erase(text.find_last_not_of(' ') + 1);
  const size_t missing = text.rfind(" does not exist:");
  if (missing != std::string::npos && missing + 16 == text.size())
    text = text.substr(0, text.rfind(' ', missing - 1) + 1) + "the path is empty";
  const std::string twice = "At Most 1 required but received ";
  if (const size_t at = text.find(twice); at != std::string::npos)
    text = text.substr(0, at) + "given " + text.substr(at + twice.size()) + " times; give it once";
  return text + " (see " + typed + " --help)";
}

}  // namespace lengen::cli
