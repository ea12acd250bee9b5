#pragma once
// What the ranks of a data-parallel group must share (config but train.threads, the --data
// files by content, --resume), compared at setup.
#include <string>

#include "lengen/config.h"

namespace lengen {

// The agreement as text (a JSON object), the same on every rank started alike.
std::string rank_agreement(const Config& config, const std::string& data_dir, bool resume);

// The first thing rank `rank`'s agreement (`here`) differs in from rank 0's:
// "config key model.d_model: 64 on rank 0, 32 on rank 1", "resume: true on rank 0, false on rank 1".
std::string rank_agreement_difference(const std::string& rank_zero, const std::string& here, int rank);

}  // namespace lengen
