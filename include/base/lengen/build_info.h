#pragma once
// What made a result: the lengen build and the machine it ran on, as a run records them.
#include <string>

namespace lengen {

// "lengen 0431c53 on AMD EPYC 7B13 (2 cores)": the commit this binary was built from ("-dirty"
// from an edited tree, "unknown" outside git) and this machine's CPU model.
std::string build_and_machine();

}  // namespace lengen
