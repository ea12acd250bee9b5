#include "lengen/run_record.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "lengen/atomic_write.h"
#include "lengen/json_file.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

// An older build's record: the marker .lengen_run ("lengen run folder", then "id ID") and
// training_data.json beside it.
std::optional<RunRecord> read_older_record(const std::string& run_dir) {
  std::error_code error;
  const fs::path marker = fs::path(run_dir) / ".lengen_run";
  if (!fs::is_regular_file(marker, error)) return std::nullopt;
  RunRecord record;
  std::ifstream in(marker);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("id ", 0) == 0) record.run_id = line.substr(3);
  const fs::path data = fs::path(run_dir) / "training_data.json";
  if (fs::is_regular_file(data, error)) record.training_data = read_json_file(data.string());
  return record;
}

}  // namespace

std::optional<RunRecord> read_run_record(const std::string& run_dir) {
  std::error_code error;
  const fs::path path = fs::path(run_dir) / kRunRecordName;
  if (!fs::is_regular_file(path, error)) return read_older_record(run_dir);
  const auto json = nlohmann::json::parse(std::ifstream(path), nullptr, /*allow_exceptions=*/false);
  // A run.json that is not lengen's (a user's file of that name) does not make the folder a run.
  if (!json.is_object() || !json.contains("run_id") || !json["run_id"].is_string()) return std::nullopt;
  return RunRecord{json["run_id"].get<std::string>(), json.value("training_data", nlohmann::json())};
}

void write_run_record(const std::string& run_dir, const RunRecord& record) {
  const nlohmann::json json{{"run_id", record.run_id}, {"training_data", record.training_data}};
  write_file_atomically((fs::path(run_dir) / kRunRecordName).string(), json.dump(2) + "\n");
  std::error_code ignored;
  fs::remove(fs::path(run_dir) / ".lengen_run", ignored);
  fs::remove(fs::path(run_dir) / "training_data.json", ignored);
}

std::string new_run_id() {
  std::random_device random;
  const uint64_t bits = (static_cast<uint64_t>(random()) << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace lengen
