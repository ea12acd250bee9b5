#pragma once
// A sweep folder's manifest, DIR/sweep.json: the runs a sweep (or several sweep files) put in
// that folder. The sweep writes it; the report reads it; both refuse a sweep.json lengen did not
// write in the same words.
#include <nlohmann/json.hpp>

#include <string>

namespace lengen {

constexpr const char* kSweepManifestName = "sweep.json";

// DIR/sweep.json read and checked: an object whose "runs" is a list of {"name": "...", ...}.
// Throws UserError "PATH is not a lengen sweep manifest (...)" for anything else, such as
// another tool's sweep.json. Call only when the file exists.
nlohmann::json read_sweep_manifest(const std::string& dir);

}  // namespace lengen
