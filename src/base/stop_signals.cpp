#include "lengen/stop_signals.h"

#include <atomic>

namespace lengen {

namespace {

// Lock-free atomics: the only state a signal handler may touch.
std::atomic<bool> stop_requested{false};
std::atomic<int> untaken_signal{0};
std::atomic<bool> stop_mid_computation{false};

extern "C" void request_stop(int signal) {
  stop_requested = true;
  untaken_signal = signal;
}

}  // namespace

StopSignals::StopSignals() {
  stop_requested = false;
  untaken_signal = 0;
  struct sigaction action {};
  action.sa_handler = request_stop;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

bool stop_signal_received() { return stop_requested; }

int take_stop_signal() { return untaken_signal.exchange(0); }

StopMidComputation::StopMidComputation() : previous_(stop_mid_computation.exchange(true)) {}

StopMidComputation::~StopMidComputation() { stop_mid_computation = previous_; }

bool stop_requested_here() { return stop_mid_computation && stop_requested; }

}  // namespace lengen
