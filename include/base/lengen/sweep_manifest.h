#pragma once
// A sweep folder's manifest, DIR/sweep.json: the runs a sweep (or several sweep files) put in
// that folder, and the names of the files the sweep keeps beside them. The sweep writes it; the report reads
// it; both refuse a sweep.json lengen did not write in the same words.
#include <nlohmann/json.hpp>
#include <string>

namespace lengen {

constexpr const char* kSweepManifestName = "sweep.json";
// The sweep folder's other files beside the run folders, per run: NAME.config.json, NAME.log and,
// for a run that failed, NAME.failure.txt. No run may be named like one of them.
constexpr const char* kSweepConfigSuffix = ".config.json";
constexpr const char* kSweepLogSuffix = ".log";
constexpr const char* kSweepFailureSuffix = ".failure.txt";

// DIR/sweep.json read and checked: an object whose "runs" is a list of {"name": "...", ...}.
// Throws UserError "PATH is not a lengen sweep manifest (...)" for anything else, such as
// another tool's sweep.json. Call only when the file exists.
nlohmann::json read_sweep_manifest(const std::string& dir);

}  // namespace lengen
