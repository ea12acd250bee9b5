#pragma once
// A short run from a long config: `--set train.steps=200` on a config written for 16000 steps
// keeps what the config means by warmup, validation and checkpoints, scaled to the new length.
#include <set>
#include <string>

#include "lengen/config.h"

namespace lengen::config {

// When `keys_set` (the keys the command line set) holds train.steps and `train.steps` is below
// `as_written.steps`, scales each of train.warmup, train.eval_every and train.checkpoint_every
// that the command line left alone and the new length cannot hold: warmup to the config's
// fraction of its steps (at most train.steps), eval_every and checkpoint_every to a tenth of the
// steps when the run would validate fewer than 10 times. Returns one line saying what was used,
// or "" when nothing changed. Configs as written (no train.steps override) are never touched.
std::string scale_schedule_to_steps(TrainConfig& train, const TrainConfig& as_written,
                                    const std::set<std::string>& keys_set);

}  // namespace lengen::config
