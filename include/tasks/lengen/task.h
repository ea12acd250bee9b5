#pragma once
// A task turns (rng, source length) into symbol sequences 0..num_symbols()-1. No tensors here.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lengen/rng.h"

namespace lengen {

using Symbols = std::vector<int32_t>;

// How a sample is laid out as one model sequence (docs/method.md, "Sequences and loss").
enum class Framing : uint8_t {
  // BOS src SEP trg EOS: the target is generated after the source, token by token.
  kTargetAfterSource,
  // BOS src: trg holds one label per source symbol, predicted in place at that symbol's position
  // (|trg| == |src|); nothing is generated after the source.
  kLabelPerPosition,
};

struct Sample {
  Symbols src;
  Symbols trg;
  Framing framing = Framing::kTargetAfterSource;
};

// Per target symbol, the source indices that answer it (the keys attention should find); empty
// where nothing does (mqmtar's QSEP).
using AnswerSources = std::vector<std::vector<int64_t>>;

// Task parameters by name (all numeric), e.g. {"vocab": 32} or {"write_prob": 0.1}.
using TaskParams = std::map<std::string, double>;

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // Number of distinct symbols in sources and targets.
  virtual int64_t num_symbols() const = 0;
  // Shortest source length the task can generate with its parameters.
  virtual int64_t min_length() const { return 1; }
  // One sample of source length `length` (>= min_length()); its source has source_length(length)
  // symbols.
  virtual Sample sample(Rng& rng, int64_t length) const = 0;
  // Symbols in a source of length `length` (tasks keeping the reference's convention differ);
  // nullopt where the reference's files vary it, so a file's lengths are not checked.
  virtual std::optional<int64_t> source_length(int64_t length) const { return length; }
  // How this task's samples are laid out; every sample it makes carries it.
  virtual Framing framing() const { return Framing::kTargetAfterSource; }
  // A copy whose per-split draws (mqmtar's vocabularies) come from `split_seed`; nullptr when
  // the task draws nothing per split.
  virtual std::unique_ptr<Task> for_split(uint64_t /*split_seed*/) const { return nullptr; }
  // Which source positions answer each target symbol of `sample`; nullopt when the task names no
  // answering key.
  virtual std::optional<AnswerSources> answer_sources(const Sample&) const { return std::nullopt; }
  // The target symbol opening each answer of a multi-answer target (mqmtar's QSEP); nullopt when
  // a target is one answer.
  virtual std::optional<int32_t> answer_marker() const { return std::nullopt; }
  // The resolved parameters (defaults filled in), for config files and logs.
  virtual TaskParams params() const = 0;
};

// Builds a task by name; unknown names or parameters and invalid values throw UserError.
// `seed` fixes anything a task draws once (mqmtar's key/value vocabulary).
std::unique_ptr<Task> make_task(const std::string& name, const TaskParams& params, uint64_t seed);

std::vector<std::string> task_names();

}  // namespace lengen
