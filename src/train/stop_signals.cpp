#include "stop_signals.h"

#include <atomic>
#include <csignal>

namespace lengen {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void request_stop(int) { stop_requested = true; }

}  // namespace

StopSignals::StopSignals() {
  stop_requested = false;
  previous_int_ = std::signal(SIGINT, request_stop);
  previous_term_ = std::signal(SIGTERM, request_stop);
}

StopSignals::~StopSignals() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
}

bool stop_signal_received() { return stop_requested; }

}  // namespace lengen
