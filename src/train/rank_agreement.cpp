#include "lengen/rank_agreement.h"

#include <nlohmann/json.hpp>

#include "lengen/config_io.h"
#include "lengen/content_hash.h"

namespace lengen {

namespace {

const std::vector<std::string> kKeysRanksMayDiffer = {"train.threads"};

nlohmann::json data_of(const std::string& data_dir) {
  if (data_dir.empty()) return "generated data";
  ContentHash hash;
  hash.add_file(data_dir + "/train.src");
  hash.add_file(data_dir + "/train.trg");
  return "--data files with hash " + hash.hex();
}

}  // namespace

std::string rank_agreement(const Config& config, const std::string& data_dir, bool resume) {
  return nlohmann::json{{"config", config_to_json(config)}, {"data", data_of(data_dir)}, {"resume", resume}}
      .dump();
}

std::string rank_agreement_difference(const std::string& rank_zero, const std::string& here) {
  const auto theirs = nlohmann::json::parse(rank_zero, nullptr, /*allow_exceptions=*/false);
  const auto ours = nlohmann::json::parse(here, nullptr, /*allow_exceptions=*/false);
  if (theirs.is_discarded() || !theirs.is_object() || !theirs.contains("config")) {
    return "rank 0 is not a lengen train of this version";
  }
  const std::string key = first_config_difference(theirs["config"], ours["config"], kKeysRanksMayDiffer);
  if (!key.empty()) {
    const nlohmann::json::json_pointer pointer("/config" + config_key_pointer(key));
    const auto value_in = [&pointer](const nlohmann::json& side) {
      return side.contains(pointer) ? side[pointer].dump() : std::string("(none)");
    };
    return "config key " + key + ": " + value_in(theirs) + " on rank 0, " + value_in(ours) + " here";
  }
  if (theirs.value("data", nlohmann::json()) != ours.value("data", nlohmann::json())) {
    return "training data: " + theirs.value("data", std::string("?")) + " on rank 0, " +
           ours.value("data", std::string("?")) + " here";
  }
  if (theirs.value("resume", false) != ours.value("resume", false)) {
    return theirs.value("resume", false) ? "--resume on rank 0, not here" : "--resume here, not on rank 0";
  }
  return "the ranks' settings differ";
}

}  // namespace lengen
