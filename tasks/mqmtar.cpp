// mqmtar, multi-query multi-token associative recall: key-value records scattered over a
// background of SPACEs, then queries of keys present; the target gives each queried value.
//
// Source for length L: L haystack symbols, then num_queries queries "QSEP k1..kk". The haystack
// holds R = floor(0.8 L / (k + v + 2)) records "k1..kk KVSEP v1..vv" (at most num_pairs), one per
// slot: L is split into R slots of L/R symbols (the first L%R one longer) and each record sits
// at a random offset in its slot, always followed by at least one SPACE. The queried keys are
// distinct records of the sample; the target is "QSEP v1..vv" per query.
//
// The key/value pairs come from a vocabulary of num_pairs pairs (distinct keys, distinct values)
// drawn once from the task seed, so training and evaluation data share it; unlike the reference,
// everything else is drawn from the sample's rng too. Symbols follow the reference: SPACE = 0,
// KVSEP = 1, QSEP = 2, then the alphabet.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "lengen/errors.h"
#include "sampling.h"
#include "task_factories.h"
#include "task_params.h"

namespace lengen {

namespace {

constexpr int32_t kSpace = 0;
constexpr int32_t kKvSep = 1;
constexpr int32_t kQSep = 2;
constexpr int32_t kFirstLetter = 3;
// Stream of the task seed that draws the vocabulary.
constexpr uint64_t kVocabularyStream = 0x766f636162;
// Tuple spaces are capped here; past it (huge alphabets or long keys) only the first
// kMaxTupleSpace tuples are drawn from, which still gives distinct keys.
constexpr int64_t kMaxTupleSpace = int64_t{1} << 62;

// Set from the parameters below; no defaults here, they are the list's.
struct MqmtarShape {
  int64_t alphabet = 0;
  int64_t key_len = 0;
  int64_t value_len = 0;
  int64_t num_pairs = 0;
  int64_t num_queries = 0;
};

constexpr double kMaxSymbols = std::numeric_limits<int32_t>::max() - kFirstLetter;
constexpr double kMaxTupleLen = 64;
// The vocabulary is held in memory.
constexpr double kMaxPairs = int64_t{1} << 24;

// The one list of mqmtar's parameters, each with the member of MqmtarShape it sets.
struct ShapeParameter {
  TaskParameter parameter;
  int64_t MqmtarShape::*member;
};
const std::vector<ShapeParameter>& shape_parameters() {
  static const std::vector<ShapeParameter> parameters = {
      {{"alphabet", 256, 2, kMaxSymbols, true, "letters that keys and values are spelled with"},
       &MqmtarShape::alphabet},
      {{"key_len", 2, 1, kMaxTupleLen, true, "letters per key"}, &MqmtarShape::key_len},
      {{"value_len", 2, 1, kMaxTupleLen, true, "letters per value"}, &MqmtarShape::value_len},
      {{"num_pairs", 10000, 1, kMaxPairs, true,
        "key-value pairs of the vocabulary (drawn once from task.seed); also the most records per input"},
       &MqmtarShape::num_pairs},
      {{"num_queries", 4, 1, kMaxPairs, true, "queried keys per sample, distinct, answered in order"},
       &MqmtarShape::num_queries},
  };
  return parameters;
}

TaskParams params_of(const MqmtarShape& shape) {
  TaskParams params;
  for (const ShapeParameter& shape_parameter : shape_parameters()) {
    params[shape_parameter.parameter.name] = static_cast<double>(shape.*shape_parameter.member);
  }
  return params;
}

// alphabet^len, saturating at kMaxTupleSpace.
int64_t tuple_space(int64_t alphabet, int64_t len) {
  int64_t space = 1;
  for (int64_t i = 0; i < len; ++i) {
    if (space > kMaxTupleSpace / alphabet) return kMaxTupleSpace;
    space *= alphabet;
  }
  return space;
}

// `count` distinct tuples of `len` letters, concatenated.
Symbols distinct_tuples(Rng& rng, const MqmtarShape& shape, int64_t len, int64_t count) {
  Symbols tuples;
  tuples.reserve(static_cast<size_t>(count * len));
  for (int64_t index : distinct_indices(rng, tuple_space(shape.alphabet, len), count)) {
    for (int64_t i = 0; i < len; ++i) {
      tuples.push_back(kFirstLetter + static_cast<int32_t>(index % shape.alphabet));
      index /= shape.alphabet;
    }
  }
  return tuples;
}

class MqmtarTask : public Task {
 public:
  MqmtarTask(const MqmtarShape& shape, uint64_t seed) : shape_(shape) {
    Rng rng(derive_seed(seed, kVocabularyStream));
    keys_ = distinct_tuples(rng, shape_, shape_.key_len, shape_.num_pairs);
    values_ = distinct_tuples(rng, shape_, shape_.value_len, shape_.num_pairs);
  }

  std::string name() const override { return "mqmtar"; }
  int64_t num_symbols() const override { return kFirstLetter + shape_.alphabet; }
  int64_t source_length(int64_t length) const override {
    return length + shape_.num_queries * (1 + shape_.key_len);
  }
  TaskParams params() const override { return params_of(shape_); }

  int64_t records(int64_t length) const {
    // floor(0.8 L / (k + v + 2)) in integers, so no rounding differs between machines.
    return std::min(4 * length / (5 * (shape_.key_len + shape_.value_len + 2)), shape_.num_pairs);
  }

  // The shortest L with records(L) >= num_queries: 4L >= 5 (k + v + 2) num_queries.
  int64_t min_length() const override {
    return (5 * (shape_.key_len + shape_.value_len + 2) * shape_.num_queries + 3) / 4;
  }

  Sample sample(Rng& rng, int64_t length) const override {
    const int64_t count = records(length);
    const int64_t record_len = shape_.key_len + 1 + shape_.value_len;
    std::vector<int64_t> pairs = distinct_indices(rng, shape_.num_pairs, count);
    Sample sample;
    sample.src.assign(static_cast<size_t>(length), kSpace);
    int64_t slot_start = 0;
    for (int64_t r = 0; r < count; ++r) {
      int64_t slot_len = length / count + (r < length % count ? 1 : 0);
      int64_t at = slot_start + uniform_int(rng, 0, slot_len - record_len - 1);
      at = put(key(pairs[r]), sample.src, at);
      sample.src[at] = kKvSep;
      put(value(pairs[r]), sample.src, at + 1);
      slot_start += slot_len;
    }
    for (int64_t query : distinct_indices(rng, count, shape_.num_queries)) {
      sample.src.push_back(kQSep);
      append(key(pairs[query]), sample.src);
      sample.trg.push_back(kQSep);
      append(value(pairs[query]), sample.trg);
    }
    return sample;
  }

  // Each query's "QSEP v1..vv" target: no answer for the QSEP, then for each value token the
  // value tokens of the record whose key is the query's (the only place "key KVSEP" occurs).
  std::optional<AnswerSources> answer_sources(const Sample& sample) const override {
    const int64_t query_len = 1 + shape_.key_len;
    const auto haystack = static_cast<int64_t>(sample.src.size()) - shape_.num_queries * query_len;
    AnswerSources sources;
    for (int64_t q = 0; q < shape_.num_queries; ++q) {
      const auto key = sample.src.begin() + haystack + q * query_len + 1;
      std::vector<int64_t> values;
      for (int64_t at = shape_.key_len; at + shape_.value_len < haystack; ++at) {
        if (sample.src[static_cast<size_t>(at)] != kKvSep) continue;
        if (!std::equal(key, key + shape_.key_len, sample.src.begin() + at - shape_.key_len)) continue;
        for (int64_t v = 1; v <= shape_.value_len; ++v) values.push_back(at + v);
        break;
      }
      sources.emplace_back();
      for (int64_t v = 0; v < shape_.value_len; ++v) sources.push_back(values);
    }
    return sources;
  }

 private:
  struct Span {
    const int32_t* begin;
    const int32_t* end;
  };
  Span key(int64_t pair) const { return tuple(keys_, pair, shape_.key_len); }
  Span value(int64_t pair) const { return tuple(values_, pair, shape_.value_len); }
  static Span tuple(const Symbols& tuples, int64_t pair, int64_t len) {
    const int32_t* begin = tuples.data() + pair * len;
    return {begin, begin + len};
  }
  // Writes `span` into `out` at `at`; returns the position after it.
  static int64_t put(Span span, Symbols& out, int64_t at) {
    std::copy(span.begin, span.end, out.begin() + at);
    return at + (span.end - span.begin);
  }
  static void append(Span span, Symbols& out) { out.insert(out.end(), span.begin, span.end); }

  MqmtarShape shape_;
  Symbols keys_;    // num_pairs keys of key_len letters each
  Symbols values_;  // num_pairs values of value_len letters each
};

std::unique_ptr<Task> make_mqmtar(const CheckedParams& params, uint64_t seed) {
  MqmtarShape shape;
  for (const ShapeParameter& shape_parameter : shape_parameters()) {
    shape.*shape_parameter.member = params.integer(shape_parameter.parameter.name);
  }
  for (const auto& [name, len] :
       {std::pair{"key_len", shape.key_len}, std::pair{"value_len", shape.value_len}}) {
    const int64_t space = tuple_space(shape.alphabet, len);
    if (shape.num_pairs > space) {
      throw UserError(param_error("mqmtar", "num_pairs",
                                  "is " + std::to_string(shape.num_pairs) + " but alphabet^" + name + " = " +
                                      std::to_string(space) + " allows only that many distinct tuples"));
    }
  }
  if (shape.num_queries > shape.num_pairs) {
    throw UserError(param_error("mqmtar", "num_queries",
                                "is " + std::to_string(shape.num_queries) +
                                    " but queried keys are distinct and num_pairs is " +
                                    std::to_string(shape.num_pairs)));
  }
  return std::make_unique<MqmtarTask>(shape, seed);
}

}  // namespace

TaskDefinition mqmtar_task() {
  std::vector<TaskParameter> parameters;
  for (const ShapeParameter& shape_parameter : shape_parameters())
    parameters.push_back(shape_parameter.parameter);
  return {"mqmtar", parameters, make_mqmtar};
}

}  // namespace lengen
