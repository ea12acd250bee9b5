#include "lengen/run_record.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

std::optional<RunRecord> read_run_record(const std::string& run_dir) {
  std::error_code error;
  const fs::path path = fs::path(run_dir) / kRunRecordName;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  const auto json = nlohmann::json::parse(std::ifstream(path), nullptr, /*allow_exceptions=*/false);
  // A run.json that is not lengen's (a user's file of that name) does not make the folder a run.
  if (!json.is_object() || !json.contains("run_id") || !json["run_id"].is_string()) return std::nullopt;
  return RunRecord{json["run_id"].get<std::string>(), json.value("training_data", nlohmann::json()),
                   json.value("trained_by", "")};
}

void write_run_record(const std::string& run_dir, const RunRecord& record) {
  const nlohmann::json json{
      {"run_id", record.run_id}, {"training_data", record.training_data}, {"trained_by", record.trained_by}};
  write_file_atomically((fs::path(run_dir) / kRunRecordName).string(), json.dump(2) + "\n");
}

std::string new_run_id() {
  std::random_device random;
  const uint64_t bits = (static_cast<uint64_t>(random()) << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

void check_checkpoint_belongs(const std::string& path, const TrainingProgress& progress, const RunFolder& run) {
  const auto record = read_run_record(run.path());
  const std::string id = record ? record->run_id : "";
  if (!progress.run_id.empty() && !id.empty() && progress.run_id != id) {
    throw UserError("checkpoint " + path + " was written by another run (run id " + progress.run_id +
                    "), not by " + run.path() + " (run id " + id +
                    "); evaluate it in the run folder that trained it");
  }
}

}  // namespace lengen
