#include "lengen/data_record.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

std::string data_record_text(const Task& task, uint64_t seed, std::optional<TrainLengths> train) {
  nlohmann::json record = {{"task", task.name()}, {"params", task.params()}, {"seed", seed}};
  if (train) record["train_lengths"] = {train->min, train->max};
  return record.dump(2) + "\n";
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
  for (const auto& [name, value] : task.params()) {
    const nlohmann::json wanted = value;
    if (!recorded_params.contains(name) || recorded_params[name] != wanted) {
      throw UserError(
          "--data " + dir + " holds data of " + task.name() + " with " + name + "=" +
          (recorded_params.contains(name) ? recorded_params[name].dump() : std::string("(none)")) + " (" +
          path + "), but the config's task has " + name + "=" + wanted.dump());
    }
  }
}

}  // namespace lengen
