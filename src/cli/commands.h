#pragma once
// Each subcommand of `lengen` lives in its own file and registers itself here.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>

namespace lengen::cli {

// Thrown by a command that finished without error but must exit with `code`
// (e.g. 130 after Ctrl-C wrote a checkpoint).
struct ExitWith {
  int code;
};
constexpr int kDivergedExitCode = 3;

// Set to 1 by `lengen launch` for workers of rank > 0, so a bad option is printed once (by rank 0);
// left set in a user's shell it silences nothing.
inline constexpr const char* kQuietUserErrorsVariable = "LENGEN_QUIET_USER_ERRORS";
inline bool user_errors_quiet() {
  const char* value = std::getenv(kQuietUserErrorsVariable);
  const char* rank = std::getenv("RANK");
  return value != nullptr && std::strcmp(value, "1") == 0 && rank != nullptr && rank[0] != '\0' &&
         std::strcmp(rank, "0") != 0;
}

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_attention_command(CLI::App& app);

}  // namespace lengen::cli
