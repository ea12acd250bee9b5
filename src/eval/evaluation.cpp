#include "lengen/evaluation.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "lengen/batch.h"
#include "lengen/data_record.h"
#include "lengen/data_streams.h"
#include "lengen/decode.h"
#include "lengen/errors.h"
#include "lengen/rng.h"
#include "lengen/sequence.h"
#include "lengen/task_files.h"
#include "lengen/training_data.h"

namespace lengen {

namespace {

double mean_over_heads(const std::vector<LayerAttentionSummary>& layers,
                       const std::vector<double> LayerAttentionSummary::*field) {
  double sum = 0.0;
  size_t count = 0;
  for (const auto& layer : layers) {
    for (double value : layer.*field) sum += value;
    count += (layer.*field).size();
  }
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

std::vector<LayerAttentionSummary> summarize(const AttentionStats& stats) {
  std::vector<LayerAttentionSummary> layers;
  for (const HeadStats& head_stats : stats.layers) {
    LayerAttentionSummary layer;
    if (head_stats.rows > 0 && head_stats.nonzero_sum.defined()) {
      const double rows = static_cast<double>(head_stats.rows);
      auto nonzero = head_stats.nonzero_sum.to(torch::kDouble).contiguous();
      auto entropy = head_stats.entropy_sum.to(torch::kDouble).contiguous();
      for (int64_t h = 0; h < nonzero.size(0); ++h) {
        layer.nonzero_per_query.push_back(nonzero[h].item<double>() / rows);
        layer.entropy.push_back(entropy[h].item<double>() / rows);
      }
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

double LengthResult::mean_nonzero_per_query() const {
  return mean_over_heads(attention, &LayerAttentionSummary::nonzero_per_query);
}

double LengthResult::mean_entropy() const {
  return mean_over_heads(attention, &LayerAttentionSummary::entropy);
}

SequenceMetrics score_generated(const std::vector<std::vector<int32_t>>& generated,
                                const std::vector<Sample>& samples, std::optional<int32_t> answer_marker) {
  SequenceMetrics metrics;
  for (size_t i = 0; i < samples.size(); ++i) {
    std::vector<int32_t> expected;
    for (int32_t symbol : samples[i].trg) expected.push_back(symbol_to_token(symbol));
    expected.push_back(kEos);
    std::vector<bool> right(expected.size());
    for (size_t t = 0; t < expected.size() && t < generated[i].size(); ++t) right[t] = generated[i][t] == expected[t];
    const int64_t correct = std::count(right.begin(), right.end(), true);
    if (answer_marker) count_answers(expected, right, symbol_to_token(*answer_marker), metrics);
    metrics.samples += 1;
    metrics.tokens += static_cast<int64_t>(expected.size());
    metrics.correct_tokens += correct;
    metrics.exact += generated[i] == expected;
  }
  return metrics;
}

int64_t sequences_per_batch(const EvalConfig& eval, const std::vector<Sample>& samples) {
  int64_t longest = 1;
  for (const Sample& sample : samples)
    longest = std::max(longest, static_cast<int64_t>(sample.src.size() + sample.trg.size()));
  return std::clamp<int64_t>(eval.batch_tokens / longest, 1, eval.batch_size);
}

LengthResult evaluate_samples(Decoder& model, const std::vector<Sample>& samples, int64_t length,
                              const EvalConfig& eval, const std::function<void(int64_t)>& after_batch,
                              AttentionOnTargetMeter* target_meter, std::optional<int32_t> answer_marker) {
  torch::NoGradGuard no_grad;
  model->eval();
  const auto device = model->parameters().front().device();
  // Labels predicted in place are read off one pass over the source: nothing is generated, so
  // greedy decoding and teacher forcing are the same computation.
  const bool greedy = eval.decode == DecodeMode::kGreedy && !samples.empty() &&
                      samples.front().framing == Framing::kTargetAfterSource;
  LengthResult result;
  result.length = length;
  result.decode = eval.decode;
  AttentionStats stats;
  AttentionStats* stats_target = eval.attention_stats ? &stats : nullptr;
  SequenceMetrics teacher_forced;
  SequenceMetrics generated;
  const auto batch = static_cast<size_t>(sequences_per_batch(eval, samples));
  for (size_t first = 0; first < samples.size(); first += batch) {
    const size_t last = std::min(samples.size(), first + batch);
    const std::vector<Sample> chunk(samples.begin() + first, samples.begin() + last);
    // Greedy mode takes its statistics from decoding, where the model attends to its own output.
    const auto score = [&] {
      teacher_forced.add(
          score_teacher_forced(model, to_device(collate(chunk), device), greedy ? nullptr : stats_target,
                               answer_marker));
    };
    if (target_meter != nullptr) {
      target_meter->measure(model, chunk, score);
    } else {
      score();
    }
    if (greedy) {
      std::vector<std::vector<int32_t>> prompts;
      std::vector<int64_t> caps;
      for (const Sample& sample : chunk) {
        prompts.push_back(encode_prompt(sample.src));
        caps.push_back(greedy_token_cap(static_cast<int64_t>(sample.src.size()), eval.decode_cap));
      }
      generated.add(score_generated(greedy_decode(model, prompts, caps, stats_target), chunk, answer_marker));
    }
    if (after_batch) after_batch(static_cast<int64_t>(last));
  }
  result.metrics = greedy ? generated : teacher_forced;
  result.loss = teacher_forced.loss();
  if (stats_target != nullptr) result.attention = summarize(stats);
  return result;
}

namespace {

// The samples of one test_{i}_{L} split, checked against its name: it must hold samples, and
// every source must have the task's size for length L.
std::vector<Sample> read_split(const Task& task, const EvalSplit& split, std::string* content_hash) {
  const std::string source_file = split.stem + ".src";
  if (split.length < task.min_length()) {
    throw UserError(source_file + ": the name says length " + std::to_string(split.length) + ", but task " +
                    task.name() + " needs at least " + std::to_string(task.min_length()));
  }
  auto samples = read_samples(split.stem, task.num_symbols(), task.framing(), content_hash);
  if (samples.empty()) throw UserError(source_file + ": no samples");
  const std::optional<int64_t> expected = task.source_length(split.length);
  for (size_t i = 0; expected && i < samples.size(); ++i) {
    if (static_cast<int64_t>(samples[i].src.size()) != *expected) {
      throw UserError(source_file + ":" + std::to_string(i + 1) + ": " +
                      std::to_string(samples[i].src.size()) + " symbols, but the name says length " +
                      std::to_string(split.length) + " (" + std::to_string(*expected) + " symbols for task " +
                      task.name() + ")");
    }
  }
  return samples;
}

}  // namespace

std::vector<EvalSet> evaluation_sets(const Task& task, const Config& config, const std::string& data_dir) {
  std::vector<EvalSet> sets;
  if (data_dir.empty()) {
    for (int64_t length : evaluation_lengths(config)) {
      const uint64_t seed = derive_seed(config.task.seed, kEvalStream(length));
      auto samples = fixed_samples(task, length, samples_at_length(config.eval, length), seed);
      nlohmann::json data = {
          {"source", "generated"},         {"task", task.name()}, {"params", task.params()},
          {"task_seed", config.task.seed}, {"seed", seed},        {"samples", samples.size()}};
      sets.push_back({length, std::move(samples), std::move(data)});
    }
    return sets;
  }
  check_data_record(data_dir, task);
  if (const std::string note = unrecorded_data_note(data_dir, task); !note.empty()) spdlog::warn(note);
  for (const EvalSplit& split : list_eval_splits(data_dir)) {
    std::string files_hash;  // of the bytes read, not of the files as they are a moment later
    auto samples = read_split(task, split, &files_hash);
    const int64_t wanted = samples_at_length(config.eval, split.length);
    if (static_cast<int64_t>(samples.size()) > wanted) samples.resize(wanted);
    const std::string name = std::filesystem::path(split.stem).filename().string();
    const nlohmann::json file = {{"name", name}, {"hash", files_hash}, {"samples", samples.size()}};
    // Several splits of one length (test_0_L, test_1_L) count as one set.
    if (!sets.empty() && sets.back().length == split.length) {
      sets.back().samples.insert(sets.back().samples.end(), samples.begin(), samples.end());
      sets.back().data["files"].push_back(file);
      sets.back().data["samples"] = sets.back().samples.size();
    } else {
      nlohmann::json data = {{"source", "files"},
                             {"dir", data_dir},
                             {"files", nlohmann::json::array({file})},
                             {"samples", samples.size()}};
      sets.push_back({split.length, std::move(samples), std::move(data)});
    }
  }
  if (sets.empty()) throw UserError(data_dir + " has no test_{i}_{L}.src/.trg files");
  return sets;
}

}  // namespace lengen
