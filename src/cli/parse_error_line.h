#pragma once
// A command-line mistake as one line: CLI11's own message, or for an unknown subcommand its
// name and the closest real one.
#include <CLI/CLI.hpp>
#include <string>

namespace lengen::cli {

std::string parse_error_line(CLI::App& app, int argc, char** argv, const CLI::ParseError& error);

}  // namespace lengen::cli
