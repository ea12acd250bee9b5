#pragma once
// Runs the built `lengen` binary through /bin/sh and keeps its exit code, stdout and stderr,
// for tests of what a user sees: one line on stderr and exit code 2 for every user error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace lengen::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
  // Lines on stderr: a user error prints exactly one.
  long err_lines() const { return std::count(err.begin(), err.end(), '\n'); }
};

// `prefix` runs before the binary in the same shell (e.g. "ulimit -f 100;"); `args` are shell words.
inline CliResult run_lengen(const std::filesystem::path& scratch, const std::string& args,
                            const std::string& prefix = "") {
  const std::filesystem::path out = scratch / "cli_stdout.txt", err = scratch / "cli_stderr.txt";
  const std::string command =
      prefix + " " + std::string(LENGEN_CLI_PATH) + " " + args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(command.c_str());
  CliResult result;
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out_in(out), err_in(err);
  result.out.assign(std::istreambuf_iterator<char>(out_in), {});
  result.err.assign(std::istreambuf_iterator<char>(err_in), {});
  return result;
}

// A file's whole text ("" when it cannot be read).
inline std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A user error: exit 2 and one line on stderr holding `expected`.
inline void expect_one_line_refusal(const CliResult& result, const std::string& expected) {
  EXPECT_EQ(result.code, 2) << result.out << result.err;
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
}

// A tiny copy config as JSON text, trained in a second or two on one thread.
inline std::string tiny_copy_json(int steps = 6) {
  return R"({
  "task": {"name": "copy", "params": {"vocab": 4}, "len_min": 2, "len_max": 4},
  "model": {"layers": 1, "d_model": 16, "heads": 2, "d_head": 8, "d_mlp": 32},
  "train": {"steps": )" +
         std::to_string(steps) + R"(, "batch_size": 4, "warmup": 2, "log_every": 3, "eval_every": 3,
            "checkpoint_every": 3, "val_samples": 4, "threads": 1},
  "eval": {"lengths": [4], "samples": 4, "batch_size": 4}
})";
}

// A config's text without its task parameters (the task's defaults then apply).
inline std::string without_task_params(std::string config) {
  const std::string params = R"("params": {"vocab": 4}, )";
  const size_t at = config.find(params);
  if (at != std::string::npos) config.erase(at, params.size());
  return config;
}

}  // namespace lengen::testing
