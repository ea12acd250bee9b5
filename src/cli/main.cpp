// The `lengen` command: one subcommand per job. User errors end with one line and exit 2.
#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "lengen/allocator.h"
#include "lengen/blas_kernels.h"
#include "lengen/errors.h"
#include "lengen/stop_signals.h"
#include "lengen/thread_waits.h"
#include "lengen/trainer.h"

namespace lengen::cli {
namespace {

namespace fs = std::filesystem;

// An empty or blank value of any option is refused: an empty path is the current folder or the
// root to the functions that take it (`--out ''` would write a run into /).
void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) {
        const bool blank = value.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
        return blank ? std::string(value.empty() ? "the value is empty" : "the value is blank")
                     : std::string();
      },
      // No description: the help's option lines stay as they are, without ":NONEMPTY" on each.
      "", "non-empty");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() > 0) option->check(non_empty);  // flags take no value
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*command);
}

// A command-line mistake as one line: CLI11's own message, or for an unknown subcommand its
// name and the closest real one.
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
    if (std::find(names.begin(), names.end(), argv[i]) == names.end())
      return unknown_name_message((command == &app ? "" : typed + " ") + "command", argv[i], names);
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

void add_commands(CLI::App& app) {
  app.require_subcommand(1);
  app.set_version_flag("--version", "lengen 0.1");
  add_info_command(app);
  add_bench_command(app);
  add_data_command(app);
  add_config_command(app);
  add_train_command(app);
  add_eval_command(app);
  add_sweep_command(app);
  add_report_command(app);
  add_attention_command(app);
  add_launch_command(app);
  refuse_empty_values(app);
}

// Arguments and the working folder end up in JSON files, which hold UTF-8 only: refused before
// anything is written, not as an internal error after training.
bool arguments_recordable(int argc, char** argv) {
  std::error_code no_cwd;
  std::vector<std::string> texts(argv + 1, argv + argc);
  texts.push_back(fs::current_path(no_cwd).string());
  for (const std::string& text : texts) {
    try {
      (void)nlohmann::json(text).dump();
    } catch (const nlohmann::json::type_error&) {
      std::cerr << "lengen: error: "
                << nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << " is not UTF-8 text; lengen records paths and settings in JSON files (rename the file or "
                   "folder)\n";
      return false;
    }
  }
  return true;
}

// Parses the arguments and runs the subcommand; what ends it early becomes one line and an exit code.
int run_command(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    if (!user_errors_quiet()) {
      std::cerr << "lengen: error: " << printable(parse_error_line(app, argc, argv, e)) << "\n";
    }
    return kUserErrorExitCode;
  } catch (const ExitWith& e) {
    return e.code;
  } catch (const StopRequested& e) {
    std::cerr << "lengen: " << e.what() << "\n";
    return kInterruptedExitCode;
  } catch (const TrainingDiverged& e) {
    std::cerr << "lengen: training diverged: " << e.what() << "\n";
    return kDivergedExitCode;
  } catch (const UserError& e) {
    if (!user_errors_quiet()) std::cerr << "lengen: error: " << e.what() << "\n";
    return kUserErrorExitCode;
  } catch (const fs::filesystem_error& e) {
    // A path the user gave that cannot be created, read or replaced (permissions, a file
    // where a folder is needed, a full disk).
    std::string what = e.what();  // "filesystem error: cannot create directories: REASON [PATH]"
    if (what.rfind("filesystem error: ", 0) == 0) what.erase(0, 18);
    std::cerr << "lengen: error: " << printable(what) << "\n";
    return kUserErrorExitCode;
  } catch (const c10::Error& e) {
    // LibTorch's own errors carry a backtrace over many lines: the first line says what failed.
    const std::string message = e.what_without_backtrace();
    const std::string first = message.substr(0, message.find('\n'));
    if (first.find("allocate") != std::string::npos) {
      std::cerr << "lengen: error: out of memory (" << first
                << "): a model size, length, vocabulary or batch is too large for this machine\n";
      return kUserErrorExitCode;
    }
    std::cerr << "lengen: internal error: LibTorch: " << first << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "lengen: error: out of memory: a batch size, length or sample count is too large for this "
                 "machine\n";
    return kUserErrorExitCode;
  } catch (const std::exception& e) {
    std::cerr << "lengen: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lengen::cli

int main(int argc, char** argv) {
  lengen::use_best_blas_kernels(argv);
  lengen::keep_program_arguments(argv);
  lengen::configure_allocator();
  CLI::App app{"lengen: length generalization of attention, on synthetic tasks"};
  lengen::cli::add_commands(app);
  if (!lengen::cli::arguments_recordable(argc, argv)) return lengen::kUserErrorExitCode;
  return lengen::cli::run_command(app, argc, argv);
}
