#pragma once
// What a sweep finds in the folder of one of its runs: finished, to resume, to keep as it is, and
// whether what is there was trained with the config the sweep now asks for.
#include <string>
#include <vector>

#include "lengen/config.h"
#include "pending_run.h"

namespace lengen {

// Training ran to the train.steps of the run's config.json, and the run was then evaluated.
bool is_finished(const RunPaths& paths);

// Why a run is neither resumed nor started over (which would replace what it has), or "".
std::string why_kept_as_it_is(const RunPaths& paths);

// The keys a finished run may differ in from the sweep and still count as its run; a started
// run may also differ in train.steps (a resume may grow them).
extern const std::vector<std::string> kKeysAFinishedRunMayDifferIn;
extern const std::vector<std::string> kKeysAStartedRunMayDifferIn;

// How the run's config.json (or, with `or_sweep_config`, NAME.config.json when it has none)
// differs from `wanted_config` ("KEY is A there, B in the sweep"), or "".
std::string stale_difference(const Config& wanted_config, const RunPaths& paths,
                             const std::vector<std::string>& may_differ_in = kKeysAFinishedRunMayDifferIn,
                             bool or_sweep_config = false, bool finished = true);

// Why a started run cannot resume to the sweep's train.steps, or "".
std::string resume_past_steps(const Config& wanted, const RunPaths& paths);

// What to do about a run folder that differs from what the sweep asks for.
std::string stale_advice(const RunPaths& paths, const std::vector<std::string>& may_differ_in);

// What a finished run's results lack of the sweep's measurements, with the command that adds
// them, or "".
std::string finished_run_note(const Config& wanted_config, const RunPaths& paths);

}  // namespace lengen
