#include "lengen/rank_agreement.h"

#include <nlohmann/json.hpp>

#include "lengen/config_io.h"
#include "lengen/run_start.h"

namespace lengen {

std::string rank_agreement(const Config& config, const std::string& data_dir, bool resume) {
  nlohmann::json resolved = config_to_json(config);
  resolved["train"].erase("threads");  // each machine sets its own
  resolved.erase("description");       // free text: a --set it names differs in its own key
  // By content only: the same files under another path on another machine are the same data.
  const nlohmann::json data = training_data_record(data_dir);
  return nlohmann::json{{"config", resolved},
                        {"data", data.is_object() ? data["hash"] : nlohmann::json("generated")},
                        {"resume", resume}}
      .dump();
}

std::string rank_agreement_difference(const std::string& rank_zero, const std::string& here, int rank) {
  const auto theirs = nlohmann::json::parse(rank_zero, nullptr, /*allow_exceptions=*/false);
  const auto ours = nlohmann::json::parse(here, nullptr, /*allow_exceptions=*/false);
  if (!theirs.is_object() || !ours.is_object()) return "rank 0 is not a lengen train of this version";
  const std::string key = first_config_difference(theirs, ours, {});
  if (key.empty()) return "the ranks' settings differ";
  return (key.rfind("config.", 0) == 0 ? "config key " + key.substr(7) : key) + ": " +
         config_value_text(theirs, key) + " on rank 0, " + config_value_text(ours, key) + " on rank " +
         std::to_string(rank);
}

}  // namespace lengen
