#pragma once
// SIGINT and SIGTERM as a request to stop: the trainer checkpoints, and sweep and launch pass the
// request on to their children and wait for them.
#include <signal.h>

#include <stdexcept>

namespace lengen {

// The exit code of a process that stopped on a stop signal after saving (the shell's SIGINT).
constexpr int kInterruptedExitCode = 130;

// Catches SIGINT and SIGTERM while it lives; interrupted system calls restart (no EINTR).
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

// Thrown by work that gives up on a stop signal without writing its result (an evaluation).
class StopRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether a stop signal arrived since the innermost StopSignals was made.
bool stop_signal_received();

// Marks work that a stop signal may cut mid-computation: long kernels inside it poll
// stop_requested_here(). Work outside one (a training step) is never cut.
class StopMidComputation {
 public:
  StopMidComputation();
  ~StopMidComputation();
  StopMidComputation(const StopMidComputation&) = delete;
  StopMidComputation& operator=(const StopMidComputation&) = delete;

 private:
  bool previous_;
};

// A stop signal arrived inside a StopMidComputation (of any thread): give up.
bool stop_requested_here();

// The stop signal that arrived since the last call, or 0: each is taken (forwarded) once.
int take_stop_signal();

}  // namespace lengen
