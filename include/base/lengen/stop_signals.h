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

// Marks work that may be cut short by a stop signal in the middle of a computation: inside one,
// long kernels (the attention's blocks of queries) poll stop_requested_here() and end with
// StopRequested, so an evaluation at 100,000s of tokens stops within seconds, not after its sample.
// Work outside one is never cut: training finishes its step, whose checkpoint the stop writes.
class StopMidComputation {
 public:
  StopMidComputation();
  ~StopMidComputation();
  StopMidComputation(const StopMidComputation&) = delete;
  StopMidComputation& operator=(const StopMidComputation&) = delete;

 private:
  bool previous_;
};

// A stop signal arrived and the work in progress lies inside a StopMidComputation: give up.
// Any thread may ask (the scope is the process's, as the signal is).
bool stop_requested_here();

// The stop signal (SIGINT or SIGTERM) that arrived since the last call, or 0: each signal is
// taken once, so a process forwarding it to children forwards every Ctrl-C exactly once.
int take_stop_signal();

}  // namespace lengen
