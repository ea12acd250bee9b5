// `lengen launch --nproc N -- train CONFIG ...`: runs N data-parallel workers of this very
// binary on one machine, setting torchrun's variables for each, and stops them all when
// one fails so that no rank waits forever for a dead peer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "lengen/errors.h"

extern char** environ;

namespace lengen::cli {

namespace {

struct LaunchArgs {
  int nproc = 2;
  int master_port = 0;  // 0: any free port
  double grace_seconds = 5.0;
  std::vector<std::string> command;
};

volatile std::sig_atomic_t pending_signal = 0;

extern "C" void remember_signal(int signal) { pending_signal = signal; }

// A port nobody listens on now; rank 0 binds it a moment later.
int free_port() {
  const int socket_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  const bool ok = socket_fd >= 0 && ::bind(socket_fd, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
                  ::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (socket_fd >= 0) ::close(socket_fd);
  if (!ok) throw UserError(std::string("cannot find a free port for the workers: ") + std::strerror(errno));
  return ntohs(address.sin_port);
}

// This process's environment with the worker's rendezvous variables replacing any inherited.
std::vector<std::string> worker_environment(int rank, int world_size, int port) {
  const std::vector<std::string> names = {"RANK",        "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT"};
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (std::find(names.begin(), names.end(), name) == names.end()) result.push_back(text);
  }
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"RANK", std::to_string(rank)},
                                                        {"WORLD_SIZE", std::to_string(world_size)},
                                                        {"LOCAL_RANK", std::to_string(rank)},
                                                        {"LOCAL_WORLD_SIZE", std::to_string(world_size)},
                                                        {"MASTER_ADDR", "127.0.0.1"},
                                                        {"MASTER_PORT", std::to_string(port)}}) {
    result.push_back(name + "=" + value);
  }
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// Everything the child needs is built before fork: between fork and exec only
// async-signal-safe calls are allowed.
pid_t start_worker(const std::string& program, std::vector<std::string> argv, std::vector<std::string> envp) {
  auto argv_c = c_strings(argv);
  auto envp_c = c_strings(envp);
  const pid_t pid = ::fork();
  if (pid < 0) throw UserError(std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    ::execve(program.c_str(), argv_c.data(), envp_c.data());
    ::_exit(127);
  }
  return pid;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
           ")";
  }
  return "stopped with status " + std::to_string(status);
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

void signal_running(const std::vector<pid_t>& pids, const std::vector<bool>& running, int signal) {
  for (size_t rank = 0; rank < pids.size(); ++rank) {
    if (running[rank]) ::kill(pids[rank], signal);
  }
}

void run_launch(const LaunchArgs& args) {
  if (args.command.empty() || args.command[0] != "train") {
    throw UserError("lengen launch runs data-parallel `train` workers: give `-- train CONFIG --out DIR ...`");
  }
  const int port = args.master_port != 0 ? args.master_port : free_port();
  // Workers run this very binary (kRunningProgram), even if a rebuild replaced its file.
  std::vector<std::string> argv = {std::filesystem::read_symlink(kRunningProgram).string()};
  argv.insert(argv.end(), args.command.begin(), args.command.end());

  // Installed before the workers start so that a Ctrl-C always reaches all of them.
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  spdlog::info("launching {} workers on 127.0.0.1:{}", args.nproc, port);
  std::vector<pid_t> pids;
  std::vector<bool> running;
  for (int rank = 0; rank < args.nproc; ++rank) {
    pids.push_back(start_worker(kRunningProgram, argv, worker_environment(rank, args.nproc, port)));
    running.push_back(true);
  }

  using Clock = std::chrono::steady_clock;
  int alive = args.nproc;
  bool interrupted = false;
  int failed_rank = -1, failed_status = 0;
  bool killed = false;
  Clock::time_point kill_at;
  while (alive > 0) {
    if (const int signal = pending_signal) {
      pending_signal = 0;
      interrupted = true;
      signal_running(pids, running, signal);
    }
    // Reaps every worker that ended since the last look. When several failed at once, the
    // cause is more likely one killed by a signal than one whose peer vanished under it.
    std::vector<std::pair<size_t, int>> ended;  // rank, status
    int status = 0;
    for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
      const auto rank = static_cast<size_t>(std::find(pids.begin(), pids.end(), pid) - pids.begin());
      if (rank == pids.size()) continue;
      running[rank] = false;
      --alive;
      ended.emplace_back(rank, status);
    }
    std::stable_sort(ended.begin(), ended.end(), [](const auto& a, const auto& b) {
      return WIFSIGNALED(a.second) && !WIFSIGNALED(b.second);
    });
    for (const auto& [rank, ended_status] : ended) {
      const bool ok =
          WIFEXITED(ended_status) && (WEXITSTATUS(ended_status) == 0 ||
                                      (interrupted && WEXITSTATUS(ended_status) == kInterruptedExitCode));
      if (ok || failed_rank >= 0) continue;
      failed_rank = static_cast<int>(rank);
      failed_status = ended_status;
      if (alive > 0) spdlog::error("rank {} {}; stopping the other workers", rank, describe(ended_status));
      signal_running(pids, running, SIGTERM);
      kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(args.grace_seconds));
    }
    if (!ended.empty()) continue;
    if (failed_rank >= 0 && !killed && Clock::now() >= kill_at) {
      signal_running(pids, running, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (failed_rank >= 0) {
    std::cerr << "lengen: error: data-parallel worker rank " << failed_rank << " of " << args.nproc << " "
              << describe(failed_status) << "\n";
    throw ExitWith{exit_code(failed_status)};
  }
  if (interrupted) throw ExitWith{kInterruptedExitCode};
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto args = std::make_shared<LaunchArgs>();
  auto* cmd = app.add_subcommand(
      "launch",
      "Train data-parallel with N local worker processes, e.g. launch --nproc 2 -- train CONFIG --out DIR. "
      "Each worker uses train.threads LibTorch threads: keep nproc x threads within the cores "
      "(on 2 cores: --set train.threads=1)");
  cmd->add_option("--nproc", args->nproc, "Number of worker processes")->check(CLI::Range(1, 1024));
  cmd->add_option("--master-port", args->master_port, "Rendezvous port on 127.0.0.1 (default: a free one)")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--grace", args->grace_seconds, "Seconds the other workers get to stop after one fails")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("command", args->command, "After --: the lengen command each worker runs (train ...)")
      ->required();
  cmd->callback([args] { run_launch(*args); });
}

}  // namespace lengen::cli
