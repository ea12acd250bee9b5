#include "lengen/data_record.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "lengen/content_hash.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

namespace {

// Beyond 2^53 a double no longer holds every whole number: such a value stays as it is.
nlohmann::json whole_as_integer(double value) {
  constexpr double kExactIntegers = 9007199254740992.0;
  const bool whole = std::nearbyint(value) == value && std::fabs(value) < kExactIntegers;
  return whole ? nlohmann::json(static_cast<int64_t>(value)) : nlohmann::json(value);
}

// A recorded parameter as a message shows it: 32, also where an older data.json wrote 32.0.
std::string shown_param(const nlohmann::json& params, const std::string& name) {
  if (!params.contains(name)) return "(none)";
  const nlohmann::json& value = params[name];
  return value.is_number_float() ? whole_as_integer(value.get<double>()).dump() : value.dump();
}

}  // namespace

nlohmann::json task_params_json(const TaskParams& params) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : params) json[name] = whole_as_integer(value);
  return json;
}

std::string data_record_text(const Task& task, uint64_t seed, std::optional<TrainLengths> train) {
  nlohmann::json record = {
      {"task", task.name()}, {"params", task_params_json(task.params())}, {"seed", seed}};
  if (train) record["train_lengths"] = {train->min, train->max};
  return record.dump(2) + "\n";
}

std::string data_record_difference(const std::string& dir, const Task& task, uint64_t seed) {
  const std::string path = (std::filesystem::path(dir) / kDataRecordName).string();
  if (!std::filesystem::exists(path)) return "";
  const nlohmann::json record = read_json_file(path);
  if (!record.is_object()) return "no record";
  const nlohmann::json wanted = nlohmann::json::parse(data_record_text(task, seed, std::nullopt));
  if (record.value("task", nlohmann::json()) != wanted["task"]) {
    return "task " + record.value("task", nlohmann::json()).dump();
  }
  const nlohmann::json params = record.value("params", nlohmann::json::object());
  for (const auto& [name, value] : wanted["params"].items()) {
    if (!params.contains(name) || params[name] != value) {
      return name + "=" + shown_param(params, name);
    }
  }
  if (record.value("seed", nlohmann::json()) != wanted["seed"]) {
    return "seed " + record.value("seed", nlohmann::json()).dump();
  }
  return "";
}

std::optional<TrainLengths> recorded_train_lengths(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kDataRecordName).string();
  if (!std::filesystem::exists(path)) return std::nullopt;
  const nlohmann::json record = read_json_file(path);
  if (!record.is_object() || !record.contains("train_lengths")) return std::nullopt;
  const nlohmann::json& lengths = record["train_lengths"];
  const auto positive = [](const nlohmann::json& value) {
    return value.is_number_integer() && value.get<int64_t>() >= 1;
  };
  if (!lengths.is_array() || lengths.size() != 2 || !positive(lengths[0]) || !positive(lengths[1]) ||
      lengths[0].get<int64_t>() > lengths[1].get<int64_t>()) {
    throw UserError(path + ": \"train_lengths\" is " + lengths.dump() +
                    ", not [shortest, longest] task lengths of the training split");
  }
  return TrainLengths{lengths[0].get<int64_t>(), lengths[1].get<int64_t>()};
}

std::string unrecorded_data_note(const std::string& dir, const Task& task) {
  const std::filesystem::path path = std::filesystem::path(dir) / kDataRecordName;
  std::error_code error;
  if (std::filesystem::exists(path, error)) return "";
  return "--data " + dir + " has no " + kDataRecordName +
         " (lengen data writes one): its files are read as " + task.name() +
         " samples with only their symbols and lengths checked, not whether they are " + task.name() + "'s";
}

void check_data_record(const std::string& dir, const Task& task) {
  const std::string path = (std::filesystem::path(dir) / kDataRecordName).string();
  if (!std::filesystem::exists(path)) return;
  const nlohmann::json record = read_json_file(path);
  const std::string recorded_task =
      record.is_object() && record.contains("task") && record["task"].is_string()
          ? record["task"].get<std::string>()
          : "";
  if (recorded_task.empty()) {
    throw UserError(path +
                    ": no \"task\" name; this file records the task the folder's data was generated "
                    "from (lengen data writes it)");
  }
  if (recorded_task != task.name()) {
    throw UserError("--data " + dir + " holds data of task " + recorded_task + " (" + path +
                    "), but the config's task is " + task.name());
  }
  const nlohmann::json recorded_params = record.value("params", nlohmann::json::object());
  const nlohmann::json wanted_params = task_params_json(task.params());
  for (const auto& [name, wanted] : wanted_params.items()) {
    if (!recorded_params.contains(name) || recorded_params[name] != wanted) {
      throw UserError("--data " + dir + " holds data of " + task.name() + " with " + name + "=" +
                      shown_param(recorded_params, name) + " (" + path + "), but the config's task has " +
                      name + "=" + wanted.dump());
    }
  }
}

}  // namespace lengen
