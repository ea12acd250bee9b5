#pragma once
// Each subcommand of `lengen` lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

namespace lengen::cli {

void add_info_command(CLI::App& app);
CLI::App* add_bench_command(CLI::App& app);  // returns `bench`, for its other subcommands
void add_data_command(CLI::App& app);
void add_config_command(CLI::App& app);

}  // namespace lengen::cli
