#include "lengen/build_info.h"

#include <fstream>
#include <thread>

#include "lengen_build_id.h"

namespace lengen {

namespace {

// The CPU model as Linux names it; another CPU sums floats with other kernels and trains a
// slightly different model, so a result names it.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "an unknown CPU";
}

}  // namespace

std::string lengen_build() { return LENGEN_BUILD_ID; }

std::string build_and_machine() {
  return "lengen " + lengen_build() + " on " + cpu_model() + " (" +
         std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

}  // namespace lengen
