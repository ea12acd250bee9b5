#pragma once
// SIGINT and SIGTERM during training: the current step finishes, a checkpoint is written and
// train() returns, instead of the process dying between two checkpoints.
namespace lengen {

// Catches SIGINT and SIGTERM while it lives; the handlers before it come back afterwards.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

// Whether a signal arrived since the innermost StopSignals was made.
bool stop_signal_received();

}  // namespace lengen
