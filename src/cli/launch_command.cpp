// `lengen launch --nproc N -- train CONFIG ...`: runs N data-parallel workers of this very
// binary on one machine, setting torchrun's variables for each, and stops them all when
// one fails so that no rank waits forever for a dead peer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "count_validators.h"
#include "lengen/child_processes.h"
#include "lengen/errors.h"
#include "lengen/stop_signals.h"

namespace lengen::cli {

namespace {

struct LaunchArgs {
  int nproc = 2;
  int master_port = 0;  // 0: any free port
  double grace_seconds = 5.0;
  std::vector<std::string> command;
};

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

// The rendezvous variables torchrun sets for a worker, replacing any this process inherited;
// the workers after rank 0 leave bad input for rank 0 to name.
std::vector<std::string> worker_environment(int rank, int world_size, int port) {
  const std::string r = std::to_string(rank), n = std::to_string(world_size);
  return environment_with({"RANK=" + r, "WORLD_SIZE=" + n, "LOCAL_RANK=" + r, "LOCAL_WORLD_SIZE=" + n,
                           "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                           std::string(kQuietUserErrorsVariable) + (rank == 0 ? "=0" : "=1")});
}

bool is_user_error(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == kUserErrorExitCode; }

void run_launch(const LaunchArgs& args) {
  if (args.command.empty() || args.command[0] != "train") {
    throw UserError("lengen launch runs data-parallel `train` workers: give `-- train CONFIG --out DIR ...`");
  }
  const int port = args.master_port != 0 ? args.master_port : free_port();
  std::vector<std::string> argv = {running_program_path()};
  argv.insert(argv.end(), args.command.begin(), args.command.end());

  // Caught before the workers start so that a Ctrl-C always reaches all of them.
  StopSignals stop_signals;
  spdlog::info("launching {} workers on 127.0.0.1:{}", args.nproc, port);
  std::map<pid_t, int> running;  // pid -> rank
  for (int rank = 0; rank < args.nproc; ++rank)
    running[start_child({argv, worker_environment(rank, args.nproc, port), ""})] = rank;
  const auto signal_running = [&running](int signal) {
    std::vector<pid_t> pids;
    for (const auto& entry : running) pids.push_back(entry.first);
    signal_children(pids, signal);
  };

  using Clock = std::chrono::steady_clock;
  const auto grace =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(args.grace_seconds));
  int failed_rank = -1, failed_status = 0, rank0_status = 0;
  Clock::time_point terminate_at = Clock::time_point::max(), kill_at = Clock::time_point::max();
  while (!running.empty()) {
    ChildWait wait = wait_for_children_or_stop(std::min(terminate_at, kill_at));
    if (wait.stop_signal != 0) signal_running(wait.stop_signal);
    // When several workers ended at once, the cause is more likely one killed by a signal than
    // one whose peer vanished under it.
    std::stable_sort(wait.ended.begin(), wait.ended.end(), [](const ChildEnd& a, const ChildEnd& b) {
      return WIFSIGNALED(a.status) && !WIFSIGNALED(b.status);
    });
    for (const ChildEnd& end : wait.ended) {
      const auto it = running.find(end.pid);
      if (it == running.end()) continue;
      const int rank = it->second;
      running.erase(it);
      if (rank == 0) rank0_status = end.status;
      const bool ok = WIFEXITED(end.status) &&
                      (WEXITSTATUS(end.status) == 0 ||
                       (stop_signal_received() && WEXITSTATUS(end.status) == kInterruptedExitCode));
      if (ok || failed_rank >= 0) continue;
      failed_rank = rank;
      failed_status = end.status;
      // Bad input: every rank meets it at once, and rank 0 names it; the others get the grace
      // period to end on their own before they are stopped.
      terminate_at = Clock::now() + (is_user_error(end.status) ? grace : Clock::duration::zero());
      if (!is_user_error(end.status) && !running.empty())
        spdlog::error("rank {} {}; stopping the other workers", rank, describe_exit(end.status));
      kill_at = terminate_at + grace;
    }
    if (Clock::now() >= terminate_at) {
      signal_running(SIGTERM);
      terminate_at = Clock::time_point::max();
    }
    if (Clock::now() >= kill_at) {
      signal_running(SIGKILL);
      kill_at = Clock::time_point::max();
    }
  }
  // Rank 0 printed the bad input's one line: nothing to add.
  if (failed_rank >= 0 && is_user_error(failed_status) && is_user_error(rank0_status)) {
    throw ExitWith{kUserErrorExitCode};
  }
  if (failed_rank >= 0) {
    std::cerr << "lengen: error: data-parallel worker rank " << failed_rank << " of " << args.nproc << " "
              << describe_exit(failed_status) << "\n";
    throw ExitWith{exit_code_of(failed_status)};
  }
  if (stop_signal_received()) throw ExitWith{kInterruptedExitCode};
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
      ->capture_default_str()
      ->check(seconds_up_to(3600));
  cmd->add_option("command", args->command, "After --: the lengen command each worker runs (train ...)")
      ->required();
  cmd->callback([args] { run_launch(*args); });
}

}  // namespace lengen::cli
