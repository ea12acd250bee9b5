#include "lengen/child_processes.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "lengen/errors.h"
#include "lengen/stop_signals.h"

extern char** environ;

namespace lengen {

namespace {

// How often a wait looks for ended children and signals; short next to any run's length.
constexpr std::chrono::milliseconds kPollInterval{20};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (const auto& s : strings) result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

}  // namespace

std::string running_program_path() { return std::filesystem::read_symlink(kRunningProgram).string(); }

pid_t start_child(const ChildCommand& command) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!command.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, command.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  const std::vector<char*> argv = c_strings(command.argv);
  const std::vector<char*> envp = c_strings(command.environment);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, kRunningProgram, &actions, nullptr, argv.data(),
                                command.environment.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    throw UserError("cannot start " +
                    (command.argv.empty() ? std::string(kRunningProgram) : command.argv[0]) + ": " +
                    std::strerror(error));
  }
  return pid;
}

ChildWait wait_for_children_or_stop(std::chrono::steady_clock::time_point until) {
  ChildWait wait;
  while (true) {
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) wait.ended.push_back({pid, status});
    wait.stop_signal = take_stop_signal();
    if (!wait.ended.empty() || wait.stop_signal != 0 || std::chrono::steady_clock::now() >= until)
      return wait;
    std::this_thread::sleep_for(kPollInterval);
  }
}

void signal_children(const std::vector<pid_t>& pids, int signal) {
  for (pid_t pid : pids) kill(pid, signal);
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
           ")";
  }
  return "stopped with status " + std::to_string(status);
}

std::vector<std::string> environment_with(const std::vector<std::string>& entries) {
  const auto name = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const auto same_name = [&](const std::string& added) { return name(added) == name(*entry); };
    if (std::none_of(entries.begin(), entries.end(), same_name)) result.push_back(*entry);
  }
  result.insert(result.end(), entries.begin(), entries.end());
  return result;
}

}  // namespace lengen
