#pragma once
// DIR/sweep.json: the runs a sweep put in that folder, and the names of its files beside them.
#include <nlohmann/json.hpp>
#include <string>

namespace lengen {

constexpr const char* kSweepManifestName = "sweep.json";
// The sweep folder's other files beside the run folders, per run: NAME.config.json, NAME.log and,
// for a run that failed, NAME.failure.txt. No run may be named like one of them.
constexpr const char* kSweepConfigSuffix = ".config.json";
constexpr const char* kSweepLogSuffix = ".log";
constexpr const char* kSweepFailureSuffix = ".failure.txt";

// DIR/sweep.json read; UserError "PATH is not a lengen sweep manifest (...)" for another tool's.
nlohmann::json read_sweep_manifest(const std::string& dir);

}  // namespace lengen
