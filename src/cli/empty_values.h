#pragma once
// One rule for every option and argument of every command: an empty value, or one of blanks
// only, is refused. An empty path is the current folder or the root to the functions that take
// it (`--out ''` would write a run into /), an empty list would mean "the defaults", and no option
// of lengen means anything by an empty value.
#include <CLI/CLI.hpp>

#include <string>

namespace lengen::cli {

inline void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) {
        const bool blank = value.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
        return blank ? std::string(value.empty() ? "the value is empty" : "the value is blank") : std::string();
      },
      // No description: the help's option lines stay as they are, without ":NONEMPTY" on each.
      "", "non-empty");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() > 0) option->check(non_empty);  // flags take no value
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*command);
}

}  // namespace lengen::cli
