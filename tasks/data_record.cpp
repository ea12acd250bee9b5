#include "lengen/data_record.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

namespace {

std::string record_path(const std::string& dir) {
  return (std::filesystem::path(dir) / kDataRecordName).string();
}

// DIR/data.json; null when DIR has none.
nlohmann::json read_record(const std::string& dir) {
  const std::string path = record_path(dir);
  return std::filesystem::exists(path) ? read_json_file(path) : nlohmann::json();
}

// The first of `task`'s parameters that `record` gives another value or none; "" when none.
std::string differing_param(const nlohmann::json& record, const Task& task) {
  const nlohmann::json params = record.value("params", nlohmann::json::object());
  const nlohmann::json wanted = task_params_json(task.params());
  for (const auto& [name, value] : wanted.items()) {
    if (params.value(name, nlohmann::json()) != value) return name;
  }
  return "";
}

// NAME=VALUE as the record gives it.
std::string recorded_param(const nlohmann::json& record, const std::string& name) {
  const nlohmann::json params = record.value("params", nlohmann::json::object());
  return name + "=" + (params.contains(name) ? params[name].dump() : "(none)");
}

}  // namespace

nlohmann::json task_params_json(const TaskParams& params) {
  // Beyond 2^53 a double no longer holds every whole number: such a value stays as it is.
  constexpr double kExactIntegers = 9007199254740992.0;
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : params) {
    const bool whole = std::nearbyint(value) == value && std::fabs(value) < kExactIntegers;
    json[name] = whole ? nlohmann::json(static_cast<int64_t>(value)) : nlohmann::json(value);
  }
  return json;
}

std::string data_record_text(const Task& task, uint64_t seed, std::optional<TrainLengths> train) {
  nlohmann::json record = {
      {"task", task.name()}, {"params", task_params_json(task.params())}, {"seed", seed}};
  if (train) record["train_lengths"] = {train->min, train->max};
  return record.dump(2) + "\n";
}

std::optional<TrainLengths> recorded_train_lengths(const std::string& dir) {
  const nlohmann::json record = read_record(dir);
  if (!record.contains("train_lengths")) return std::nullopt;
  return TrainLengths{record["train_lengths"][0].get<int64_t>(), record["train_lengths"][1].get<int64_t>()};
}

std::string unrecorded_data_note(const std::string& dir, const Task& task) {
  std::error_code error;
  if (std::filesystem::exists(record_path(dir), error)) return "";
  return "--data " + dir + " has no " + kDataRecordName +
         " (lengen data writes one): its files are read as " + task.name() +
         " samples with only their symbols and lengths checked, not whether they are " + task.name() + "'s";
}

void check_data_record(const std::string& dir, const Task& task) {
  const nlohmann::json record = read_record(dir);
  if (record.is_null()) return;
  const std::string recorded_task = record.value("task", std::string());
  if (recorded_task != task.name()) {
    throw UserError("--data " + dir + " holds data of task " + recorded_task + " (" + record_path(dir) +
                    "), but the config's task is " + task.name());
  }
  if (const std::string name = differing_param(record, task); !name.empty()) {
    throw UserError("--data " + dir + " holds data of " + task.name() + " with " +
                    recorded_param(record, name) + " (" + record_path(dir) + "), but the config's task has " +
                    name + "=" + task_params_json(task.params())[name].dump());
  }
}

}  // namespace lengen
