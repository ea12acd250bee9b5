// The `lengen` command: one subcommand per job. User errors end with one line and exit 2.
#include <c10/util/Exception.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>

#include "commands.h"
#include "empty_values.h"
#include "filesystem_error_line.h"
#include "lengen/allocator.h"
#include "lengen/blas_kernels.h"
#include "lengen/errors.h"
#include "lengen/stop_signals.h"
#include "lengen/thread_waits.h"
#include "lengen/trainer.h"
#include "lengen/utf8.h"
#include "parse_error_line.h"

namespace {

void add_commands(CLI::App& app) {
  app.require_subcommand(1);
  app.set_version_flag("--version", "lengen 0.1");
  lengen::cli::add_info_command(app);
  lengen::cli::add_bench_command(app);
  lengen::cli::add_data_command(app);
  lengen::cli::add_config_command(app);
  lengen::cli::add_train_command(app);
  lengen::cli::add_eval_command(app);
  lengen::cli::add_sweep_command(app);
  lengen::cli::add_report_command(app);
  lengen::cli::add_attention_command(app);
  lengen::cli::add_launch_command(app);
  lengen::cli::refuse_empty_values(app);
}

// Whether lengen can write the arguments and the working folder where it records them: prints why
// not and returns false when it cannot. Paths and settings end up in JSON files, which hold UTF-8
// only, and in one-line rows of tables and logs, which a newline or another control character breaks.
bool arguments_recordable(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool control =
        std::any_of(arg.begin(), arg.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
    if (lengen::is_utf8(arg) && !control) continue;
    std::string shown;
    for (const unsigned char byte : arg)
      shown += byte < 0x80 ? std::string(1, static_cast<char>(byte)) : fmt::format("\\x{:02x}", byte);
    std::cerr << "lengen: error: argument " << i << " '" << lengen::printable(shown) << "' "
              << (control ? "holds a control character (a newline, tab or escape)" : "is not UTF-8 text")
              << "; lengen writes paths and settings into JSON files and one-line rows of tables and logs "
                 "(rename the file or folder)\n";
    return false;
  }
  // Run folders are recorded by their absolute paths, which hold the working folder's.
  const bool asks_for_help = std::any_of(argv + 1, argv + argc, [](const std::string& arg) {
    return arg == "--help" || arg == "-h" || arg == "--version";
  });
  std::error_code no_cwd;
  if (argc > 1 && !asks_for_help && !lengen::is_utf8(std::filesystem::current_path(no_cwd).string())) {
    std::cerr << "lengen: error: the working folder's path is not UTF-8 text; lengen records paths in JSON "
                 "files, which hold UTF-8 only (run it from another folder, or rename this one)\n";
    return false;
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
    if (!lengen::cli::user_errors_quiet()) {
      std::cerr << "lengen: error: " << lengen::printable(lengen::cli::parse_error_line(app, argc, argv, e))
                << "\n";
    }
    return lengen::kUserErrorExitCode;
  } catch (const lengen::cli::ExitWith& e) {
    return e.code;
  } catch (const lengen::StopRequested& e) {
    std::cerr << "lengen: " << e.what() << "\n";
    return lengen::kInterruptedExitCode;
  } catch (const lengen::TrainingDiverged& e) {
    std::cerr << "lengen: training diverged: " << e.what() << "\n";
    return lengen::cli::kDivergedExitCode;
  } catch (const lengen::UserError& e) {
    if (!lengen::cli::user_errors_quiet()) std::cerr << "lengen: error: " << e.what() << "\n";
    return lengen::kUserErrorExitCode;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that cannot be created, read or replaced (permissions, a file
    // where a folder is needed, a full disk).
    std::cerr << "lengen: error: " << lengen::printable(lengen::cli::filesystem_error_line(e)) << "\n";
    return lengen::kUserErrorExitCode;
  } catch (const c10::Error& e) {
    // LibTorch's own errors carry a backtrace over many lines: the first line says what failed.
    const std::string message = e.what_without_backtrace();
    const std::string first = message.substr(0, message.find('\n'));
    if (first.find("allocate") != std::string::npos) {
      std::cerr << "lengen: error: out of memory (" << first
                << "): a model size, length, vocabulary or batch is too large for this machine\n";
      return lengen::kUserErrorExitCode;
    }
    std::cerr << "lengen: internal error: LibTorch: " << first << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "lengen: error: out of memory: a batch size, length or sample count is too large for this "
                 "machine\n";
    return lengen::kUserErrorExitCode;
  } catch (const std::exception& e) {
    std::cerr << "lengen: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  lengen::use_best_blas_kernels(argv);
  lengen::keep_program_arguments(argv);
  lengen::configure_allocator();
  CLI::App app{"lengen: length generalization of attention, on synthetic tasks"};
  add_commands(app);
  if (!arguments_recordable(argc, argv)) return lengen::kUserErrorExitCode;
  return run_command(app, argc, argv);
}
