#pragma once
// SIGINT and SIGTERM as a request to stop, not a death: the trainer finishes its step and writes
// a checkpoint, and a process that runs children (sweep, launch) passes the request on to them
// and waits for them, instead of leaving them orphaned or killed between two checkpoints.
#include <signal.h>

#include <stdexcept>

namespace lengen {

// The exit code of a process that stopped on a stop signal after saving what it had (the shell's
// code for SIGINT): the trainer after its checkpoint, sweep and launch after their children.
constexpr int kInterruptedExitCode = 130;

// Catches SIGINT and SIGTERM while it lives; the handlers before it come back afterwards.
// System calls interrupted by the signal restart, so file writes and sockets never see EINTR;
// a loop that must notice the signal polls (see wait_for_children_or_stop).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

// Thrown by work that polls for a stop signal and gives up what it was doing without writing
// its result (an evaluation); the CLI ends with the message and kInterruptedExitCode.
class StopRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether a stop signal arrived since the innermost StopSignals was made.
bool stop_signal_received();

// The stop signal (SIGINT or SIGTERM) that arrived since the last call, or 0: each signal is
// taken once, so a process forwarding it to children forwards every Ctrl-C exactly once.
int take_stop_signal();

}  // namespace lengen
