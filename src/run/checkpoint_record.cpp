#include "lengen/checkpoint_record.h"

#include "lengen/config_io.h"
#include "lengen/errors.h"

namespace lengen {

std::string training_config_of(const Config& config) {
  const nlohmann::json resolved = config_to_json(config);
  return nlohmann::json{{"task", resolved.at("task")}, {"train", resolved.at("train")}}.dump();
}

bool same_training_data(const nlohmann::json& saved, const nlohmann::json& now) {
  return saved.is_object() ? now.is_object() && now.value("hash", "") == saved.value("hash", "")
                           : now.is_null();
}

std::string training_data_text(const nlohmann::json& record) {
  return record.is_object() ? "--data " + record.value("dir", std::string("?")) + " (files with hash " +
                                  record.value("hash", std::string("?")) + ")"
                            : std::string("generated data");
}

void check_checkpoint_belongs(const std::string& path, const TrainingProgress& progress, const RunFolder& run,
                              const Config& config, const nlohmann::json* data_record) {
  const std::string id = run.run_id();
  if (!progress.run_id.empty() && !id.empty() && progress.run_id != id) {
    throw UserError("checkpoint " + path + " was written by another run (run id " + progress.run_id +
                    "), not by " + run.path() + " (run id " + id +
                    "); evaluate or resume it in the run folder that trained it");
  }
  const auto stored = nlohmann::json::parse(progress.training_config, nullptr, /*allow_exceptions=*/false);
  if (stored.is_object()) {
    const nlohmann::json current = nlohmann::json::parse(training_config_of(config));
    const std::string key =
        first_config_difference(stored, current, {"train.steps", "train.threads", "train.device"});
    if (!key.empty()) {
      throw UserError("checkpoint " + path + " was trained with " + key + "=" + config_value_text(stored, key) +
                      ", this run's config.json has " + config_value_text(current, key) +
                      ": it is not a model of this config");
    }
  }
  const auto data = nlohmann::json::parse(progress.training_data, nullptr, /*allow_exceptions=*/false);
  if (data_record != nullptr && !data.is_discarded() && !same_training_data(data, *data_record)) {
    throw UserError("checkpoint " + path + " was trained on " + training_data_text(data) + ", not on " +
                    training_data_text(*data_record));
  }
}

}  // namespace lengen
