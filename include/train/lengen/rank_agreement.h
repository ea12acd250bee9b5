#pragma once
// What the ranks of a data-parallel group must share before they train together: the resolved
// config (but for train.threads, a per-machine setting), the --data files by content, --resume,
// and for a resumed run its identity and the checkpoint it continues from. Ranks started by hand with
// different ones would be averaged into one model that is none of theirs, labelled with rank 0's config; the
// process group compares them at setup (ProcessGroupOptions::agreement) and refuses a group that does not
// agree.
#include <string>

#include "lengen/config.h"

namespace lengen {

// The agreement as text (a JSON object), the same on every rank started alike.
std::string rank_agreement(const Config& config, const std::string& data_dir, const std::string& run_dir,
                           bool resume);

// The first thing rank `rank`'s agreement (`here`) differs in from rank 0's, in the user's terms:
// "config key model.d_model: 64 on rank 0, 32 on rank 1", "--resume on rank 0, not on rank 1",
// "training data: ... on rank 0, ... on rank 1", "resumed run: ... on rank 0, ... on rank 1".
std::string rank_agreement_difference(const std::string& rank_zero, const std::string& here, int rank);

}  // namespace lengen
