// lengen/child_processes.h and lengen/stop_signals.h: a child is this test binary itself
// (start_child always runs the running program), told by LENGEN_TEST_CHILD what to do before
// any test runs; the parent checks what it saw: exit codes, signals, output, environment.
#include "lengen/child_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lengen/errors.h"
#include "lengen/stop_signals.h"

namespace lengen {
namespace {

// The child's part: runs at static initialisation, so a child never reaches the tests.
const bool kIsChild = [] {
  const char* role = std::getenv("LENGEN_TEST_CHILD");
  if (role == nullptr) return false;
  const std::string what = role;
  if (what == "print-and-exit-3") {
    // Unbuffered, so the file shows the order of the writes.
    [[maybe_unused]] auto written = ::write(STDOUT_FILENO, "to stdout\n", 10);
    written = ::write(STDERR_FILENO, "to stderr\n", 10);
    std::_Exit(3);
  }
  if (what == "echo-variable") {
    const char* value = std::getenv("LENGEN_TEST_VALUE");
    std::printf("value=%s\n", value != nullptr ? value : "(unset)");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  if (what == "sleep") {
    ::sleep(60);
    std::_Exit(0);
  }
  std::_Exit(99);
}();

// Starts this binary as a child in `role`, with `variables` (NAME=VALUE) replacing inherited ones.
ChildCommand child(const std::string& role, const std::string& output_path = "",
                   std::vector<std::string> variables = {}) {
  variables.push_back("LENGEN_TEST_CHILD=" + role);
  return {{running_program_path()}, environment_with(variables), output_path};
}

// Waits for `pid` alone (no test leaves other children behind).
int wait_for(pid_t pid) {
  while (true) {
    const ChildWait wait = wait_for_children_or_stop();
    for (const ChildEnd& end : wait.ended) {
      if (end.pid == pid) return end.status;
    }
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))).string();
}

TEST(ChildProcesses, OutputAndErrorsAppendToTheOutputFile) {
  ASSERT_FALSE(kIsChild);
  const std::string log = temp_path("lengen_child_log");
  { std::ofstream(log) << "before\n"; }
  const int status = wait_for(start_child(child("print-and-exit-3", log)));
  EXPECT_EQ(exit_code_of(status), 3);
  EXPECT_EQ(describe_exit(status), "exited with code 3");
  EXPECT_EQ(read_file(log), "before\nto stdout\nto stderr\n");
  std::filesystem::remove(log);
}

TEST(ChildProcesses, TheEnvironmentGivenReplacesInheritedVariables) {
  ::setenv("LENGEN_TEST_VALUE", "inherited", 1);
  const std::string log = temp_path("lengen_child_env");
  const pid_t pid = start_child(child("echo-variable", log, {"LENGEN_TEST_VALUE=given"}));
  EXPECT_EQ(exit_code_of(wait_for(pid)), 0);
  EXPECT_EQ(read_file(log), "value=given\n");
  ::unsetenv("LENGEN_TEST_VALUE");
  std::filesystem::remove(log);
}

TEST(ChildProcesses, AChildKilledByASignalIsNamedWithIt) {
  const pid_t pid = start_child(child("sleep"));
  signal_children({pid}, SIGKILL);
  const int status = wait_for(pid);
  EXPECT_EQ(exit_code_of(status), 128 + SIGKILL);
  EXPECT_EQ(describe_exit(status).rfind("was killed by signal 9 (", 0), 0u) << describe_exit(status);
}

TEST(ChildProcesses, AnUnstartableProgramIsAUserError) {
  // posix_spawn refuses an output file in a folder that does not exist.
  EXPECT_THROW(start_child(child("sleep", "/nonexistent-folder/log.txt")), UserError);
}

TEST(StopSignals, AWaitReturnsOnAStopSignalAndTakesItOnce) {
  StopSignals stop_signals;
  EXPECT_FALSE(stop_signal_received());
  const pid_t pid = start_child(child("sleep"));
  ASSERT_EQ(::raise(SIGTERM), 0);  // caught: this process goes on
  const ChildWait wait = wait_for_children_or_stop();
  EXPECT_TRUE(wait.ended.empty());
  EXPECT_EQ(wait.stop_signal, SIGTERM);
  EXPECT_TRUE(stop_signal_received());
  EXPECT_EQ(take_stop_signal(), 0);
  signal_children({pid}, SIGKILL);
  EXPECT_EQ(exit_code_of(wait_for(pid)), 128 + SIGKILL);
}

TEST(StopSignals, AWaitEndsAtItsDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const ChildWait wait = wait_for_children_or_stop(start + std::chrono::milliseconds(50));
  EXPECT_TRUE(wait.ended.empty());
  EXPECT_EQ(wait.stop_signal, 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

TEST(StopSignals, ThePreviousHandlerComesBack) {
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  { StopSignals stop_signals; }
  struct sigaction after {};
  ::sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace lengen
