#pragma once
// Child `lengen train` processes of sweep and launch: started, waited for and described alike.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace lengen {

// The running binary as the kernel holds it: a rebuild meanwhile does not change a sweep's code.
inline constexpr const char* kRunningProgram = "/proc/self/exe";

// The path the running binary was started from, for a child's argv[0] and for messages.
std::string running_program_path();

struct ChildCommand {
  std::vector<std::string> argv;         // argv[0] included
  std::vector<std::string> environment;  // NAME=VALUE entries; empty: this process's own
  std::string output_path;               // "": inherit; else stdout and stderr append to it
};

// Starts kRunningProgram with `command`; throws UserError naming the reason when it cannot.
pid_t start_child(const ChildCommand& command);

struct ChildEnd {
  pid_t pid;
  int status;  // as waitpid reports it
};

// What a wait saw: the children that ended, and a stop signal that arrived (0 if none).
struct ChildWait {
  std::vector<ChildEnd> ended;
  int stop_signal = 0;
};

// Waits until a child has ended, a stop signal arrives or `until` passes.
ChildWait wait_for_children_or_stop(
    std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max());

// Sends `signal` to each of `pids`.
void signal_children(const std::vector<pid_t>& pids, int signal);

// The shell's exit code for a status: the child's own code, or 128 + the signal that killed it.
int exit_code_of(int status);

// "exited with code 3", "was killed by signal 9 (Killed)".
std::string describe_exit(int status);

// This process's environment with `entries` (NAME=VALUE) in place of the inherited ones of their names.
std::vector<std::string> environment_with(const std::vector<std::string>& entries);

}  // namespace lengen
