#include "lengen/build_info.h"

#include <fstream>
#include <thread>

#include "lengen_build_id.h"

namespace lengen {

namespace {

// The CPU model as Linux names it: another CPU's kernels train a slightly different model.
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

std::string build_and_machine() {
  return std::string("lengen ") + LENGEN_BUILD_ID + " on " + cpu_model() + " (" +
         std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

}  // namespace lengen
