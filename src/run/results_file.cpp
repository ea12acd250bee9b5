// results.json to and from its type. The JSON keys are written here and read here only.
#include "lengen/results_file.h"

#include <cstdio>
#include <limits>
#include <string>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"

namespace lengen {

namespace {

using Json = nlohmann::json;

// A number written as null (nlohmann writes NaN and infinities so) reads back as NaN.
double number_at(const Json& json, const char* key) {
  const Json& value = json.at(key);
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

AttentionSummary attention_from_json(const Json& json) {
  AttentionSummary attention;
  attention.nonzero_per_query = number_at(json, "nonzero_per_query");
  attention.entropy = number_at(json, "entropy");
  for (const Json& layer : json.value("layers", Json::array())) {
    attention.layers.push_back({layer.at("nonzero_per_query").get<std::vector<double>>(),
                                layer.at("entropy").get<std::vector<double>>()});
  }
  return attention;
}

TargetAttention target_from_json(const Json& json) {
  TargetAttention target;
  target.known = json.at("known").get<bool>();
  if (!target.known) {
    target.note = json.value("note", "");
    return target;
  }
  target.samples = json.at("samples").get<int64_t>();
  target.queries = json.at("queries").get<int64_t>();
  for (const Json& layer : json.at("layers")) {
    target.layers.push_back({layer.at("heads").get<std::vector<double>>(), layer.at("best_head").get<int64_t>(),
                             number_at(layer, "best"), number_at(layer, "mean")});
  }
  return target;
}

ResultEntry entry_from_json(const Json& json) {
  ResultEntry entry;
  entry.length = json.at("length").get<int64_t>();
  entry.decode = json.at("decode").get<std::string>();
  entry.samples = json.at("samples").get<int64_t>();
  entry.exact_match = number_at(json, "exact_match");
  entry.token_accuracy = number_at(json, "token_accuracy");
  entry.exact = json.at("exact").get<int64_t>();
  entry.tokens = json.at("tokens").get<int64_t>();
  entry.correct_tokens = json.at("correct_tokens").get<int64_t>();
  entry.loss = number_at(json, "loss");
  entry.answers = json.value("answers", int64_t{0});
  entry.correct_answers = json.value("correct_answers", int64_t{0});
  if (json.contains("attention")) entry.attention = attention_from_json(json.at("attention"));
  if (json.contains("attention_on_target"))
    entry.attention_on_target = target_from_json(json.at("attention_on_target"));
  entry.checkpoint = json.value("checkpoint", "");
  entry.step = json.value("step", int64_t{0});
  if (json.contains("model")) {
    const Json& model = json.at("model");
    entry.model = ModelRecord{model.at("checkpoint").get<std::string>(), model.at("step").get<int64_t>(),
                              model.at("weights_hash").get<std::string>(), model.value("schedule", ""),
                              model.value("trained_on", "")};
  }
  if (json.contains("data")) entry.data = json.at("data");
  if (json.contains("decode_cap")) entry.decode_cap = number_at(json, "decode_cap");
  return entry;
}

Json results_to_json(const ResultsByDecode& results) {
  Json json = Json::object();
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) json[decode][std::to_string(length)] = to_json(entry);
  }
  return json;
}

ResultsByDecode results_from_json(const Json& json) {
  ResultsByDecode results;
  for (const auto& [decode, by_length] : json.items()) {
    for (const auto& [length, entry] : by_length.items()) {
      ResultEntry read = entry_from_json(entry);
      read.length = std::stoll(length);
      read.decode = decode;
      results[decode][read.length] = std::move(read);
    }
  }
  return results;
}

// "attention_on_target/LAYER/best" or ".../mean" of `entry`.
std::optional<double> target_metric(const ResultEntry& entry, const std::string& name) {
  size_t layer = 0;
  char kind[5] = {};
  int end = 0;
  if (!entry.attention_on_target || !entry.attention_on_target->known ||
      std::sscanf(name.c_str(), "attention_on_target/%zu/%4s%n", &layer, kind, &end) != 2 ||
      static_cast<size_t>(end) != name.size() || layer >= entry.attention_on_target->layers.size())
    return std::nullopt;
  const TargetAttentionLayer& at = entry.attention_on_target->layers[layer];
  if (kind == std::string("best")) return at.best;
  if (kind == std::string("mean")) return at.mean;
  return std::nullopt;
}

}  // namespace

std::optional<double> ResultEntry::metric(const std::string& name) const {
  if (name == "exact_match") return exact_match;
  if (name == "token_accuracy") return token_accuracy;
  if (name == "loss") return loss;
  if (name == "answer_accuracy")
    return answers > 0 ? std::optional<double>(static_cast<double>(correct_answers) / answers) : std::nullopt;
  if (name == "nonzero_per_query")
    return attention ? std::optional<double>(attention->nonzero_per_query) : std::nullopt;
  if (name == "entropy") return attention ? std::optional<double>(attention->entropy) : std::nullopt;
  return target_metric(*this, name);
}

Json to_json(const TargetAttention& target) {
  if (!target.known) return {{"known", false}, {"note", target.note}};
  Json layers = Json::array();
  for (const TargetAttentionLayer& layer : target.layers) {
    layers.push_back(
        {{"heads", layer.heads}, {"best_head", layer.best_head}, {"best", layer.best}, {"mean", layer.mean}});
  }
  return {{"known", true}, {"samples", target.samples}, {"queries", target.queries}, {"layers", layers}};
}

std::string training_data_label(const Json& record) {
  return record.is_null() ? "generated" : "files " + record.value("hash", std::string("?"));
}

Json to_json(const ResultEntry& entry) {
  Json json = {{"length", entry.length},
               {"decode", entry.decode},
               {"samples", entry.samples},
               {"exact_match", entry.exact_match},
               {"token_accuracy", entry.token_accuracy},
               {"exact", entry.exact},
               {"tokens", entry.tokens},
               {"correct_tokens", entry.correct_tokens},
               {"loss", entry.loss},
               {"checkpoint", entry.checkpoint},
               {"step", entry.step}};
  if (entry.answers > 0) {
    json["answers"] = entry.answers;
    json["correct_answers"] = entry.correct_answers;
    json["answer_accuracy"] = static_cast<double>(entry.correct_answers) / entry.answers;
  }
  if (entry.attention_on_target) json["attention_on_target"] = to_json(*entry.attention_on_target);
  if (entry.attention) {
    Json layers = Json::array();
    for (const auto& layer : entry.attention->layers)
      layers.push_back({{"nonzero_per_query", layer.nonzero_per_query}, {"entropy", layer.entropy}});
    json["attention"] = {{"nonzero_per_query", entry.attention->nonzero_per_query},
                         {"entropy", entry.attention->entropy},
                         {"layers", layers}};
  }
  if (entry.model) {
    json["model"] = {{"checkpoint", entry.model->checkpoint},
                     {"step", entry.model->step},
                     {"weights_hash", entry.model->weights_hash}};
    if (!entry.model->schedule.empty()) json["model"]["schedule"] = entry.model->schedule;
    if (!entry.model->trained_on.empty()) json["model"]["trained_on"] = entry.model->trained_on;
  }
  if (!entry.data.is_null()) json["data"] = entry.data;
  if (entry.decode_cap) json["decode_cap"] = *entry.decode_cap;
  return json;
}

Json to_json(const ResultsFile& results) {
  Json json{{"task", results.task},
            {"train_len_min", results.train_len_min},
            {"train_len_max", results.train_len_max},
            {"seed", results.seed},
            {"method",
             {{"normalizer", results.method.normalizer},
              {"scaling", results.method.scaling},
              {"positions", results.method.positions}}}};
  if (!results.trained_with.is_null()) json["trained_with"] = results.trained_with;
  if (!results.results.empty()) json["results"] = results_to_json(results.results);
  if (!results.results_on_files.empty()) {
    Json& folders = json["results_on_files"] = Json::object();
    for (const auto& [dir, by_decode] : results.results_on_files) folders[dir] = results_to_json(by_decode);
  }
  return json;
}

ResultsFile results_file_from_json(const Json& json, const std::string& source) {
  try {
    ResultsFile results;
    results.task = json.at("task").get<std::string>();
    results.train_len_min = json.at("train_len_min").get<int64_t>();
    results.train_len_max = json.at("train_len_max").get<int64_t>();
    results.seed = json.at("seed").get<uint64_t>();
    if (json.contains("trained_with") && json.at("trained_with").is_object())
      results.trained_with = json.at("trained_with");
    const Json& method = json.at("method");
    results.method = {method.at("normalizer").get<std::string>(), method.at("scaling").get<std::string>(),
                      method.at("positions").get<std::string>()};
    if (json.contains("results")) results.results = results_from_json(json.at("results"));
    const Json on_files = json.value("results_on_files", Json::object());
    for (const auto& [dir, by_decode] : on_files.items()) results.results_on_files[dir] = results_from_json(by_decode);
    return results;
  } catch (const std::exception& e) {
    throw UserError(source + ": not a lengen results file (" + e.what() + ")");
  }
}

ResultsFile read_results_file(const std::string& path) {
  return results_file_from_json(read_json_file(path), path);
}

void write_results_file(const std::string& path, const ResultsFile& results) {
  write_file_atomically(path, to_json(results).dump(2) + "\n");
}

}  // namespace lengen
