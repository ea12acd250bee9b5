#pragma once
// What made a result: the lengen build and the machine it ran on, as a run records them.
#include <string>

namespace lengen {

// The commit this binary was built from ("0431c53", "0431c53-dirty"; "unknown" outside git).
std::string lengen_build();

// "lengen 0431c53 on AMD EPYC 7B13 (2 cores)": the build and this machine's CPU model.
std::string build_and_machine();

}  // namespace lengen
