// results.json to and from its type. The JSON keys are written here and read here only.
#include "lengen/results_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "lengen/atomic_write.h"
#include "lengen/content_hash.h"
#include "lengen/data_streams.h"
#include "lengen/errors.h"
#include "lengen/json_file.h"
#include "lengen/json_notes.h"
#include "lengen/rng.h"
#include "lengen/schedule_history.h"

namespace lengen {

const std::vector<std::string>& trained_with_keys_free_to_change() {
  static const std::vector<std::string> keys = {"train.steps", "train.threads", "train.device",
                                                "model.prefill_chunk"};
  return keys;
}

namespace {

using Json = nlohmann::json;

// The entry as lengen writes it, without a user's notes (defined below).
Json written_json(const ResultEntry& entry);

// A number written as null (nlohmann writes NaN and infinities so) reads back as NaN.
double number_at(const Json& json, const char* key) {
  const Json& value = json.at(key);
  if (!value.is_number() && !value.is_null())
    throw std::invalid_argument(std::string(key) + " is " + value.dump() + ", not a number");
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

// A fraction (exact match, token accuracy) in [0, 1], or NaN where it was written as null: a
// hand-edited 7.5 would be reported as 750%.
double checked_fraction(double value, const std::string& what) {
  if (!std::isnan(value) && !(value >= 0.0 && value <= 1.0))
    throw std::invalid_argument(what + " is " + Json(value).dump() + ", not a fraction in [0, 1]");
  return value;
}

double fraction_at(const Json& json, const char* key) { return checked_fraction(number_at(json, key), key); }

// A count in [0, at_most].
int64_t count_at(const Json& json, const char* key, int64_t at_most = std::numeric_limits<int64_t>::max()) {
  if (!json.at(key).is_number_integer())
    throw std::invalid_argument(std::string(key) + " is " + json.at(key).dump() + ", not a whole number");
  const int64_t value = json.at(key).get<int64_t>();
  if (value < 0 || value > at_most) {
    throw std::invalid_argument(std::string(key) + " is " + std::to_string(value) + ", not a count in [0, " +
                                std::to_string(at_most) + "]");
  }
  return value;
}

// A number of keys or nats: never negative (NaN where it was written as null).
double non_negative_at(const Json& json, const char* key) {
  const double value = number_at(json, key);
  if (!std::isnan(value) && !(value >= 0.0)) {
    throw std::invalid_argument(std::string(key) + " is " + json.at(key).dump() + ", not a number >= 0");
  }
  return value;
}

Json layer_to_json(const LayerAttentionSummary& layer) {
  return {{"nonzero_per_query", layer.nonzero_per_query}, {"entropy", layer.entropy}};
}

AttentionSummary attention_from_json(const Json& json) {
  AttentionSummary attention;
  attention.nonzero_per_query = non_negative_at(json, "nonzero_per_query");
  attention.entropy = non_negative_at(json, "entropy");
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
  target.samples = count_at(json, "samples");
  target.queries = count_at(json, "queries");
  for (const Json& layer : json.at("layers")) {
    // Weights on the target are fractions of one query's attention.
    const auto heads = layer.at("heads").get<std::vector<double>>();
    for (const double head : heads) checked_fraction(head, "attention_on_target head weight");
    const int64_t last_head = std::max<int64_t>(static_cast<int64_t>(heads.size()) - 1, 0);
    target.layers.push_back({heads, count_at(layer, "best_head", last_head), fraction_at(layer, "best"),
                             fraction_at(layer, "mean")});
  }
  return target;
}

ResultEntry entry_from_json(const Json& json) {
  ResultEntry entry;
  entry.length = json.at("length").get<int64_t>();
  entry.decode = json.at("decode").get<std::string>();
  entry.samples = count_at(json, "samples");
  entry.exact_match = fraction_at(json, "exact_match");
  entry.token_accuracy = fraction_at(json, "token_accuracy");
  entry.exact = count_at(json, "exact", entry.samples);
  entry.tokens = count_at(json, "tokens");
  entry.correct_tokens = count_at(json, "correct_tokens", entry.tokens);
  entry.loss = number_at(json, "loss");
  // The fractions are their counts' quotients: one edited alone would print another number.
  const auto check_quotient = [](double fraction, int64_t count, int64_t of, const char* name,
                                 const char* count_name, const char* of_name) {
    if (of > 0 && !std::isnan(fraction) && std::abs(fraction - static_cast<double>(count) / of) > 1e-9) {
      throw std::invalid_argument(std::string(name) + " is " + Json(fraction).dump() + ", but " + count_name +
                                  " / " + of_name + " is " + std::to_string(count) + " / " +
                                  std::to_string(of));
    }
  };
  check_quotient(entry.exact_match, entry.exact, entry.samples, "exact_match", "exact", "samples");
  check_quotient(entry.token_accuracy, entry.correct_tokens, entry.tokens, "token_accuracy", "correct_tokens",
                 "tokens");
  if (json.contains("attention")) entry.attention = attention_from_json(json.at("attention"));
  if (json.contains("attention_on_target"))
    entry.attention_on_target = target_from_json(json.at("attention_on_target"));
  entry.checkpoint = json.value("checkpoint", "");
  entry.step = json.value("step", int64_t{0});
  if (json.contains("model") && !json.contains("step"))
    throw std::invalid_argument("step is absent, beside a model record that names one");
  if (json.contains("model")) {
    const Json& model = json.at("model");
    // A key of the model record as text; "" when absent and `optional`.
    const auto text = [&model](const char* key, bool optional) {
      if (optional && !model.contains(key)) return std::string();
      const Json& value = model.at(key);
      if (!value.is_string()) {
        throw std::invalid_argument(std::string("model.") + key + " is " + value.dump() + ", not a string");
      }
      return value.get<std::string>();
    };
    if (!model.contains("step") || !model.at("step").is_number_integer()) {
      throw std::invalid_argument("model.step is " +
                                  (model.contains("step") ? model.at("step").dump() : "absent") +
                                  ", not a whole number");
    }
    entry.model =
        ModelRecord{text("checkpoint", false), model.at("step").get<int64_t>(), text("weights_hash", false),
                    text("schedule", true),    text("trained_on", true),        text("record_hash", true),
                    text("run_id", true)};
  }
  if (json.contains("data")) entry.data = json.at("data");
  if (json.contains("decode_cap")) {
    const double cap = number_at(json, "decode_cap");
    if (!(cap > 0.0) || entry.decode != "greedy")
      throw std::invalid_argument("decode_cap is " + json.at("decode_cap").dump() +
                                  ", not a positive cap of a greedy entry");
    entry.decode_cap = cap;
  }
  entry.extra = notes_beside(json, written_json(entry));
  return entry;
}

Json results_to_json(const ResultsByDecode& results) {
  Json json = Json::object();
  for (const auto& [decode, by_length] : results) {
    for (const auto& [length, entry] : by_length) json[decode][std::to_string(length)] = to_json(entry);
  }
  return json;
}

// A length key as written by results_to_json: a positive decimal integer and nothing else.
int64_t length_of_key(const std::string& key) {
  const bool digits_only = !key.empty() && std::all_of(key.begin(), key.end(),
                                                       [](unsigned char c) { return std::isdigit(c) != 0; });
  const int64_t length = digits_only ? std::stoll(key) : 0;  // out_of_range past int64
  if (length < 1) {
    throw std::invalid_argument("length key '" + key + "' is not a positive integer");
  }
  return length;
}

// The reason of a JSON library or range error, without nlohmann's "[json.exception.type_error.302] ".
std::string reason_of(const std::exception& cause) {
  std::string reason = cause.what();
  if (reason.rfind("[json.exception.", 0) == 0 && reason.find("] ") != std::string::npos) {
    reason = reason.substr(reason.find("] ") + 2);
  }
  // nlohmann's "key 'normalizer' not found": a key lengen writes that is missing.
  const std::string not_found = "' not found";
  if (reason.rfind("key '", 0) == 0 && reason.size() > not_found.size() &&
      reason.compare(reason.size() - not_found.size(), not_found.size(), not_found) == 0) {
    reason = reason.substr(5, reason.size() - 5 - not_found.size()) + " is absent";
  }
  return reason;
}

// One entry, a problem in it named by where it sits ("results/teacher_forced/64: exact is ...").
ResultEntry entry_at(const Json& entry, const std::string& where) {
  try {
    return entry_from_json(entry);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + ": " + reason_of(e));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + reason_of(e));
  }
}

ResultsByDecode results_from_json(const Json& json, const std::string& section) {
  // Named where it sits, not in the JSON library's words ("cannot use at() with number").
  const auto shape = [](const Json& value, const std::string& where, const char* what) {
    if (!value.is_object())
      throw std::invalid_argument(where + " is " + value.dump().substr(0, 60) + ", not " + what);
  };
  shape(json, section, "an object of decode modes");
  ResultsByDecode results;
  for (const auto& [decode, by_length] : json.items()) {
    shape(by_length, section + "/" + decode, "an object of lengths");
    for (const auto& [length, entry] : by_length.items()) {
      shape(entry, section + "/" + decode + "/" + length, "an entry (an object)");
      ResultEntry read = entry_at(entry, section + "/" + decode + "/" + length);
      // The key files the entry; the entry's own fields must say the same.
      if (read.length != length_of_key(length) || read.decode != decode) {
        throw std::invalid_argument("the entry under " + decode + "/" + length + " says length " +
                                    std::to_string(read.length) + ", decode " + read.decode);
      }
      results[decode][read.length] = std::move(read);
    }
  }
  return results;
}

// "attention_on_target/LAYER/best" or ".../mean" of `entry`.
std::optional<double> target_metric(const ResultEntry& entry, const std::string& name) {
  const std::string prefix = "attention_on_target/";
  const size_t slash = name.rfind('/');
  if (name.compare(0, prefix.size(), prefix) != 0 || slash < prefix.size()) return std::nullopt;
  const std::string layer_text = name.substr(prefix.size(), slash - prefix.size());
  const std::string kind = name.substr(slash + 1);
  if (!entry.attention_on_target || !entry.attention_on_target->known) return std::nullopt;
  if (layer_text.empty() || layer_text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const size_t layer = std::stoul(layer_text);
  const auto& layers = entry.attention_on_target->layers;
  if (layer >= layers.size()) return std::nullopt;
  if (kind == "best") return layers[layer].best;
  if (kind == "mean") return layers[layer].mean;
  return std::nullopt;
}

// The data record of an entry says where its samples came from; each of its parts that the file
// states elsewhere must agree with it. A record edited by hand (another task, other parameters, a
// sample count the entry was not measured on, generated data filed as files) would put the entry's
// figures under a provenance that did not produce them.
void check_data_record_of(const ResultEntry& entry, const ResultsFile& file, bool on_files,
                          const std::string& where) {
  if (!entry.data.is_object()) return;
  const Json& data = entry.data;
  const auto disagree = [&](const std::string& key, const Json& theirs, const std::string& ours) {
    throw std::invalid_argument(where + ": data." + key + " is " + theirs.dump() + ", but " + ours +
                                " (its data record edited by hand?)");
  };
  if (data.contains("samples") && data.at("samples") != Json(entry.samples))
    disagree("samples", data.at("samples"), "the entry counts " + std::to_string(entry.samples) + " samples");
  const std::string source = on_files ? "files" : "generated";
  if (data.contains("source") && data.at("source") != Json(source))
    disagree("source", data.at("source"), "the entry is filed under results on " + source + " data");
  if (data.contains("task") && data.at("task") != Json(file.task))
    disagree("task", data.at("task"), "the file's task is " + Json(file.task).dump());
  const Json::json_pointer trained_params("/task/params");
  if (data.contains("params") && data.at("params").is_object() &&
      file.trained_with.contains(trained_params)) {
    for (const auto& [name, value] : file.trained_with.at(trained_params).items()) {
      const Json& recorded = data.at("params").contains(name) ? data.at("params").at(name) : Json();
      // Numbers compare as numbers: 96 and 96.0 are one parameter value.
      const bool same = recorded.is_number() && value.is_number()
                            ? recorded.get<double>() == value.get<double>()
                            : recorded == value;
      if (!same) disagree("params." + name, recorded, "the model was trained with " + value.dump());
    }
  }
  const Json::json_pointer trained_task_seed("/task/seed");
  if (data.contains("task_seed") && file.trained_with.contains(trained_task_seed) &&
      data.at("task_seed") != file.trained_with.at(trained_task_seed)) {
    disagree("task_seed", data.at("task_seed"),
             "the model was trained with task.seed " + file.trained_with.at(trained_task_seed).dump());
  }
  // Generated samples are drawn from a seed derived from the task seed and the length.
  if (!on_files && data.contains("seed") && data.contains("task_seed") &&
      data.at("task_seed").is_number_integer() && data.at("task_seed") >= Json(0)) {
    const uint64_t seed = derive_seed(data.at("task_seed").get<uint64_t>(), kEvalStream(entry.length));
    if (data.at("seed") != Json(seed))
      disagree("seed", data.at("seed"),
               "task_seed " + data.at("task_seed").dump() + " at length " + std::to_string(entry.length) +
                   " draws seed " + std::to_string(seed));
  }
}

// The model record names the checkpoint an entry was measured with; its step is the entry's, and
// within the schedule it was trained under ("400@0,600@300": at most 600).
void check_model_record_of(const ResultEntry& entry, const std::string& where) {
  if (!entry.model) return;
  const ModelRecord& model = *entry.model;
  if (model.step != entry.step) {
    throw std::invalid_argument(where + ": model.step is " + std::to_string(model.step) +
                                ", but the entry's step is " + std::to_string(entry.step) +
                                " (its model record edited by hand?)");
  }
  const std::string file_name = model.checkpoint.substr(model.checkpoint.find_last_of('/') + 1);
  if (!entry.checkpoint.empty() && file_name != entry.checkpoint) {
    throw std::invalid_argument(where + ": model.checkpoint is " + Json(model.checkpoint).dump() +
                                ", but the entry's checkpoint is " + Json(entry.checkpoint).dump() +
                                " (its model record edited by hand?)");
  }
  if (!model.record_hash.empty() && model.record_hash != entry_record_hash(entry)) {
    throw std::invalid_argument(where + ": the entry does not match its model.record_hash " +
                                Json(model.record_hash).dump() +
                                " (a number, its decode, or its model or data record edited by hand?)");
  }
  if (model.schedule.empty()) return;
  const std::optional<ScheduleSegment> last = last_schedule_segment(model.schedule);
  if (!last || last->steps < model.step) {
    throw std::invalid_argument(where + ": model.step " + std::to_string(model.step) +
                                " is past its schedule " + Json(model.schedule).dump() +
                                " (its model record edited by hand?)");
  }
}

// Records written with each other: a file whose entries record what their model trained on (or a
// record_hash) was written by an evaluation that records all of them, and the model section of
// trained_with; one without them lost them by hand, and its config.json would go unchecked.
void check_records_written_together(const ResultsFile& file, const ModelRecord& model,
                                    const std::string& where) {
  const bool newest = !model.trained_on.empty() || !model.record_hash.empty();
  if (!newest) return;
  if (model.record_hash.empty()) {
    throw std::invalid_argument(where +
                                ": no model.record_hash beside model.trained_on (every evaluation "
                                "that records one writes both; removed by hand?)");
  }
  if (file.trained_with.is_object() && !file.trained_with.contains("model")) {
    throw std::invalid_argument("trained_with has no \"model\" section, but " + where +
                                " was written by an evaluation that records it (removed by hand?)");
  }
  if (file.record_hash.empty()) {
    throw std::invalid_argument("no record_hash beside " + where +
                                "'s (every evaluation that records one writes both; removed by hand?)");
  }
  if (!model.run_id.empty() && !file.run_id.empty() && model.run_id != file.run_id) {
    throw std::invalid_argument(where + " was measured by run " + model.run_id + ", not by this file's run " +
                                file.run_id + " (an entry of another run's results.json pasted in?)");
  }
}

void check_entry_records(const ResultsFile& file) {
  if (!file.record_hash.empty() && file.record_hash != results_file_hash(file)) {
    throw std::invalid_argument("the file does not match its record_hash " + Json(file.record_hash).dump() +
                                " (its task, train_len_min, train_len_max, seed, run_id, trained_with or "
                                "method edited by hand?)");
  }
  for (const bool on_files : {false, true}) {
    const ResultsByDecode* results = on_files ? &file.results_on_files : &file.results;
    const std::string section = on_files ? "results_on_files" : "results";
    for (const auto& [decode, by_length] : *results) {
      for (const auto& [length, entry] : by_length) {
        const std::string where = section + "/" + decode + "/" + std::to_string(length);
        // Every evaluation that records trained_with records both; an entry without one lost it.
        if (file.trained_with.is_object() && (!entry.model || !entry.data.is_object())) {
          throw std::invalid_argument(where + ": no " + (entry.model ? "data" : "model") +
                                      " record (every evaluation writes one; removed by hand?)");
        }
        check_model_record_of(entry, where);
        if (entry.model) check_records_written_together(file, *entry.model, where);
        check_data_record_of(entry, file, on_files, where);
      }
    }
  }
}

UserError not_a_results_file(const std::string& source, const std::exception& cause) {
  return UserError(source + ": not a lengen results file (" + reason_of(cause) + ")");
}

}  // namespace

std::string results_file_hash(const ResultsFile& results) {
  ContentHash hash;
  const Json label = {
      {"task", results.task},
      {"train_len_min", results.train_len_min},
      {"train_len_max", results.train_len_max},
      {"seed", results.seed},
      {"run_id", results.run_id},
      {"trained_with", results.trained_with},
      {"method", {results.method.normalizer, results.method.scaling, results.method.positions}}};
  hash.add(label.dump());
  return hash.hex();
}

std::optional<double> ResultEntry::metric(const std::string& name) const {
  if (name == "exact_match") return exact_match;
  if (name == "token_accuracy") return token_accuracy;
  if (name == "loss") return loss;
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
  if (record.is_null()) return "generated";
  if (!record.is_object()) return "";
  const auto hash = record.find("hash");
  return "files " + (hash != record.end() && hash->is_string() ? hash->get<std::string>() : std::string("?"));
}

namespace {

// The entry as lengen writes it, without its fingerprint and without the keys it does not know.
Json own_json(const ResultEntry& entry) {
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
  if (entry.attention_on_target) json["attention_on_target"] = to_json(*entry.attention_on_target);
  if (entry.attention) {
    Json layers = Json::array();
    for (const auto& layer : entry.attention->layers) layers.push_back(layer_to_json(layer));
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
    if (!entry.model->run_id.empty()) json["model"]["run_id"] = entry.model->run_id;
  }
  if (!entry.data.is_null()) json["data"] = entry.data;
  if (entry.decode_cap) json["decode_cap"] = *entry.decode_cap;
  return json;
}

Json written_json(const ResultEntry& entry) {
  Json json = own_json(entry);
  if (entry.model) json["model"]["record_hash"] = entry_record_hash(entry);
  return json;
}

}  // namespace

const ResultEntry* entry_past_steps(const ResultsFile& file, int64_t steps) {
  for (const ResultsByDecode* section : {&file.results, &file.results_on_files}) {
    for (const auto& [decode, by_length] : *section) {
      for (const auto& [length, entry] : by_length) {
        if (entry.step > steps) return &entry;
      }
    }
  }
  return nullptr;
}

std::string entry_record_hash(const ResultEntry& entry) {
  ContentHash hash;
  hash.add(own_json(entry).dump());
  return hash.hex();
}

Json to_json(const ResultEntry& entry) {
  Json json = written_json(entry);
  put_notes_back(json, entry.extra);
  return json;
}

std::vector<std::string> notes_moved_on_write(const ResultEntry& entry) {
  Json json = written_json(entry);
  return put_notes_back(json, entry.extra);
}

namespace {

// The file as lengen writes it, without a user's notes.
Json written_json(const ResultsFile& results) {
  Json json = {{"task", results.task},
               {"train_len_min", results.train_len_min},
               {"train_len_max", results.train_len_max},
               {"seed", results.seed},
               {"method",
                {{"normalizer", results.method.normalizer},
                 {"scaling", results.method.scaling},
                 {"positions", results.method.positions}}}};
  if (!results.run_id.empty()) json["run_id"] = results.run_id;
  if (!results.trained_with.is_null()) json["trained_with"] = results.trained_with;
  if (!results.results.empty()) json["results"] = results_to_json(results.results);
  if (!results.results_on_files.empty()) json["results_on_files"] = results_to_json(results.results_on_files);
  json["record_hash"] = results_file_hash(results);
  return json;
}

// The file without its results sections, whose entries keep their notes themselves.
Json without_results(Json json) {
  json.erase("results");
  json.erase("results_on_files");
  return json;
}

}  // namespace

Json to_json(const ResultsFile& results) {
  Json json = written_json(results);
  put_notes_back(json, results.extra);
  return json;
}

ResultsFile results_file_from_json(const Json& json, const std::string& source) {
  try {
    if (!json.is_object())
      throw std::invalid_argument(std::string("its top level is a JSON ") + json.type_name() +
                                  ", not an object");
    ResultsFile results;
    results.task = json.at("task").get<std::string>();
    results.train_len_min = json.at("train_len_min").get<int64_t>();
    results.train_len_max = json.at("train_len_max").get<int64_t>();
    results.seed = json.at("seed").get<uint64_t>();
    if (json.contains("run_id")) results.run_id = json.at("run_id").get<std::string>();
    if (json.contains("trained_with") && json.at("trained_with").is_object())
      results.trained_with = json.at("trained_with");
    const Json& method = json.at("method");
    const auto method_text = [&method](const char* key) {
      if (!method.is_object() || !method.contains(key) || !method.at(key).is_string())
        throw std::invalid_argument(
            std::string("method.") + key + " is " +
            (method.is_object() && method.contains(key) ? method.at(key).dump() : "absent") + ", not a name");
      return method.at(key).get<std::string>();
    };
    results.method = {method_text("normalizer"), method_text("scaling"), method_text("positions")};
    if (json.contains("results")) results.results = results_from_json(json.at("results"), "results");
    if (json.contains("results_on_files"))
      results.results_on_files = results_from_json(json.at("results_on_files"), "results_on_files");
    if (json.contains("record_hash")) {
      if (!json.at("record_hash").is_string())
        throw std::invalid_argument("record_hash is " + json.at("record_hash").dump() + ", not a string");
      results.record_hash = json.at("record_hash").get<std::string>();
    }
    check_entry_records(results);
    if (json.is_object())
      results.extra = notes_beside(without_results(json), without_results(written_json(results)));
    return results;
  } catch (const nlohmann::json::exception& e) {
    throw not_a_results_file(source, e);
  } catch (const std::logic_error& e) {  // a length key that is not one (length_of_key)
    throw not_a_results_file(source, e);
  }
}

ResultsFile read_results_file(const std::string& path) {
  return results_file_from_json(read_json_file(path), path);
}

void write_results_file(const std::string& path, const ResultsFile& results) {
  write_file_atomically(path, to_json(results).dump(2) + "\n");
}

}  // namespace lengen
