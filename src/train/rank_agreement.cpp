#include "lengen/rank_agreement.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "lengen/config_io.h"
#include "lengen/run_folder.h"
#include "run_setup.h"

namespace lengen {

namespace {

// By content only: the same files under another path on another machine are the same data.
nlohmann::json data_of(const std::string& data_dir) {
  const nlohmann::json record = training_data_record(data_dir);
  return record.is_object() ? "--data files with hash " + record.value("hash", std::string("?"))
                            : std::string("generated data");
}

// A resumed run by its identity and the checkpoint it continues from: ranks pointed at two copies
// of a run, or at two runs of one config, would each load their own optimizer state and step.
nlohmann::json resumed_run_of(const std::string& run_dir, bool resume) {
  if (!resume) return "a new run";
  const RunFolder run(run_dir);
  const std::string latest = run.latest_checkpoint();
  return "run id " + (run.run_id().empty() ? std::string("(none)") : run.run_id()) + " from " +
         (latest.empty() ? std::string("no checkpoint") : std::filesystem::path(latest).filename().string());
}

std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::string rank_agreement(const Config& config, const std::string& data_dir, const std::string& run_dir,
                           bool resume) {
  nlohmann::json resolved = config_to_json(config);
  // Each machine sets its own thread count.
  resolved["train"].erase("threads");
  return nlohmann::json{{"config", resolved},
                        {"data", data_of(data_dir)},
                        {"resume", resume},
                        {"run", resumed_run_of(run_dir, resume)}}
      .dump();
}

std::string rank_agreement_difference(const std::string& rank_zero, const std::string& here, int rank) {
  const auto theirs = nlohmann::json::parse(rank_zero, nullptr, /*allow_exceptions=*/false);
  const auto ours = nlohmann::json::parse(here, nullptr, /*allow_exceptions=*/false);
  if (theirs.is_discarded() || !theirs.is_object() || !theirs.contains("config")) {
    return "rank 0 is not a lengen train of this version";
  }
  const std::string on_rank = " on rank " + std::to_string(rank);
  const std::string key = first_config_difference(theirs["config"], ours["config"], {});
  if (!key.empty()) {
    const nlohmann::json::json_pointer pointer("/config" + config_key_pointer(key));
    const auto value_in = [&pointer](const nlohmann::json& side) {
      return side.contains(pointer) ? side[pointer].dump() : std::string("(none)");
    };
    return "config key " + key + ": " + value_in(theirs) + " on rank 0, " + value_in(ours) + on_rank;
  }
  if (theirs.value("resume", false) != ours.value("resume", false)) {
    return theirs.value("resume", false) ? "--resume on rank 0, not" + on_rank
                                         : "--resume" + on_rank + ", not on rank 0";
  }
  for (const char* what : {"data", "run"}) {
    const nlohmann::json a = theirs.value(what, nlohmann::json()), b = ours.value(what, nlohmann::json());
    if (a == b) continue;
    return std::string(what == std::string("data") ? "training data: " : "resumed run: ") + value_text(a) +
           " on rank 0, " + value_text(b) + on_rank;
  }
  return "the ranks' settings differ";
}

}  // namespace lengen
