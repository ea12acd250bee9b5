#include "lengen/data_record.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

std::string data_record_text(const Task& task, uint64_t seed) {
  const nlohmann::json record = {{"task", task.name()}, {"params", task.params()}, {"seed", seed}};
  return record.dump(2) + "\n";
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
