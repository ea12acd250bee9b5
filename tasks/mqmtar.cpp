// mqmtar, multi-query multi-token associative recall: key-value records scattered over a
// background of SPACEs, then queries of keys present; the target gives each queried value.
//
// Source for length L: a haystack of R records "k1..kk KVSEP v1..vv", R = floor(0.8 L / (k + v + 2))
// (at most num_pairs), each in a slot of floor(L / R) symbols, so the haystack holds R floor(L / R)
// symbols; then num_queries queries "QSEP k1..kk". The target is "QSEP v1..vv" per query.
//
// Every sample draws its records' keys and its records' values independently (each distinct within
// the sample) from a key vocabulary and a value vocabulary of num_pairs tuples, so the value of a
// key exists only in this sample's context: no table learned across samples answers a query. The
// vocabularies are drawn once per split (training, validation, each evaluation length, each data
// file) from the split's seed, or once from the task seed with shared_vocabulary. Queries are drawn
// with replacement among the sample's records, or distinct with distinct_queries. Inside its slot a
// record is placed as the reference generator places it: centred in a row of SPACEs twice the slot's
// size, from which random SPACEs are deleted down to the slot's size, so the SPACEs before it follow
// a hypergeometric law; a SPACE always follows it. Symbols follow the reference: SPACE = 0,
// KVSEP = 1, QSEP = 2, then the alphabet.
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lengen/errors.h"
#include "task_factories.h"
#include "task_params.h"

namespace lengen {

namespace {

constexpr int32_t kSpace = 0;
constexpr int32_t kKvSep = 1;
constexpr int32_t kQSep = 2;
constexpr int32_t kFirstLetter = 3;
// Stream of a split's seed (or the task seed) that draws the vocabularies.
constexpr uint64_t kVocabularyStream = 0x766f636162;
// Tuple spaces are capped here; past it (huge alphabets or long keys) only the first
// kMaxTupleSpace tuples are drawn from, which still gives distinct keys.
constexpr int64_t kMaxTupleSpace = int64_t{1} << 62;

struct MqmtarShape {
  explicit MqmtarShape(const CheckedParams& params)
      : alphabet(params.integer("alphabet")),
        key_len(params.integer("key_len")),
        value_len(params.integer("value_len")),
        num_pairs(params.integer("num_pairs")),
        num_queries(params.integer("num_queries")),
        shared_vocabulary(params.integer("shared_vocabulary") != 0),
        distinct_queries(params.integer("distinct_queries") != 0),
        params(params.values()) {}
  int64_t alphabet, key_len, value_len, num_pairs, num_queries;
  bool shared_vocabulary, distinct_queries;
  TaskParams params;
};

constexpr double kMaxLetters = kMaxTaskSymbols - kFirstLetter;
constexpr double kMaxTupleLen = 64;
// The vocabularies are held in memory.
constexpr double kMaxPairs = int64_t{1} << 24;

// `count` distinct integers from [0, n), in random order. Costs O(count), not O(n): a partial
// Fisher-Yates shuffle that remembers only the positions it has swapped.
std::vector<int64_t> distinct_indices(Rng& rng, int64_t n, int64_t count) {
  std::unordered_map<int64_t, int64_t> swapped;
  const auto at = [&](int64_t i) {
    const auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  std::vector<int64_t> chosen;
  chosen.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = uniform_int(rng, i, n - 1);
    chosen.push_back(at(j));
    swapped[j] = at(i);
  }
  return chosen;
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

// How many SPACEs precede a record in its slot of `slot` symbols. The reference centres the record
// (and the SPACE after it) in a row of 2 (slot + 1) SPACEs and deletes random SPACEs until the row
// has `slot` symbols; the SPACEs left in front are the kept ones among those that were in front:
// a hypergeometric draw, made here one kept SPACE at a time.
int64_t spaces_before_record(Rng& rng, int64_t slot, int64_t record_len) {
  const int64_t row = 2 * (slot + 1);
  int64_t in_front = row / 2 - record_len / 2;
  int64_t population = row - record_len - 1;  // the row's SPACEs outside the record and its SPACE
  const int64_t kept = slot - record_len - 1;
  int64_t before = 0;
  for (int64_t draw = 0; draw < kept; ++draw, --population) {
    if (uniform_int(rng, 0, population - 1) < in_front) {
      ++before;
      --in_front;
    }
  }
  return before;
}

class MqmtarTask : public Task {
 public:
  // The vocabularies come from `vocabulary_seed`: the task seed, or a split's seed (for_split).
  MqmtarTask(const MqmtarShape& shape, uint64_t vocabulary_seed) : shape_(shape) {
    Rng rng(derive_seed(vocabulary_seed, kVocabularyStream));
    keys_ = distinct_tuples(rng, shape_, shape_.key_len, shape_.num_pairs);
    values_ = distinct_tuples(rng, shape_, shape_.value_len, shape_.num_pairs);
  }

  std::string name() const override { return "mqmtar"; }
  int64_t num_symbols() const override { return kFirstLetter + shape_.alphabet; }
  std::optional<int64_t> source_length(int64_t length) const override {
    return haystack_length(length) + shape_.num_queries * (1 + shape_.key_len);
  }
  TaskParams params() const override { return shape_.params; }

  std::unique_ptr<Task> for_split(uint64_t split_seed) const override {
    if (shape_.shared_vocabulary) return nullptr;
    return std::make_unique<MqmtarTask>(shape_, split_seed);
  }

  int64_t records(int64_t length) const {
    // floor(0.8 L / (k + v + 2)) in integers, so no rounding differs between machines.
    return std::min(4 * length / (5 * (shape_.key_len + shape_.value_len + 2)), shape_.num_pairs);
  }
  int64_t haystack_length(int64_t length) const {
    const int64_t count = records(length);
    return count * (length / count);
  }

  // The shortest L with records(L) >= num_queries: 4L >= 5 (k + v + 2) num_queries.
  int64_t min_length() const override {
    return (5 * (shape_.key_len + shape_.value_len + 2) * shape_.num_queries + 3) / 4;
  }

  Sample sample(Rng& rng, int64_t length) const override {
    const int64_t count = records(length);
    const int64_t slot = length / count;
    const int64_t record_len = shape_.key_len + 1 + shape_.value_len;
    const auto key = [&](int64_t index) { return keys_.begin() + index * shape_.key_len; };
    const auto value = [&](int64_t index) { return values_.begin() + index * shape_.value_len; };
    const std::vector<int64_t> keys = distinct_indices(rng, shape_.num_pairs, count);
    const std::vector<int64_t> values = distinct_indices(rng, shape_.num_pairs, count);
    Sample sample;
    sample.src.assign(static_cast<size_t>(count * slot), kSpace);
    for (int64_t r = 0; r < count; ++r) {
      const auto at = sample.src.begin() + r * slot + spaces_before_record(rng, slot, record_len);
      const auto kv_sep = std::copy_n(key(keys[r]), shape_.key_len, at);
      *kv_sep = kKvSep;
      std::copy_n(value(values[r]), shape_.value_len, kv_sep + 1);
    }
    // Distinct queries, or drawn with replacement.
    std::vector<int64_t> queried =
        shape_.distinct_queries ? distinct_indices(rng, count, shape_.num_queries) : std::vector<int64_t>();
    while (static_cast<int64_t>(queried.size()) < shape_.num_queries)
      queried.push_back(uniform_int(rng, 0, count - 1));
    for (int64_t record : queried) {
      sample.src.push_back(kQSep);
      sample.src.insert(sample.src.end(), key(keys[record]), key(keys[record]) + shape_.key_len);
      sample.trg.push_back(kQSep);
      sample.trg.insert(sample.trg.end(), value(values[record]), value(values[record]) + shape_.value_len);
    }
    return sample;
  }

  // Each query's "QSEP v1..vv" target: no answer for the QSEP, then for each value token the
  // value tokens of the record whose key is the query's (the only place "key KVSEP" occurs).
  std::optional<int32_t> answer_marker() const override { return kQSep; }
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
  MqmtarShape shape_;
  Symbols keys_;    // num_pairs distinct keys of key_len letters each
  Symbols values_;  // num_pairs distinct values of value_len letters each
};

std::unique_ptr<Task> make_mqmtar(const CheckedParams& params, uint64_t seed) {
  const MqmtarShape shape(params);
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
                                    " but a sample holds at most num_pairs = " +
                                    std::to_string(shape.num_pairs) + " records, and every query needs one"));
  }
  return std::make_unique<MqmtarTask>(shape, seed);
}

}  // namespace

TaskDefinition mqmtar_task() {
  return {"mqmtar",
          {{"alphabet", 256, 2, kMaxLetters, true, "letters that keys and values are spelled with"},
           {"key_len", 2, 1, kMaxTupleLen, true, "letters per key"},
           {"value_len", 2, 1, kMaxTupleLen, true, "letters per value"},
           {"num_pairs", 10000, 1, kMaxPairs, true,
            "keys in the key vocabulary and values in the value vocabulary; a sample draws its records' keys "
            "and values from them independently; also the most records per input"},
           {"num_queries", 4, 1, kMaxPairs, true, "queries per sample, answered in order"},
           {"shared_vocabulary", 0, 0, 1, true,
            "1: one key and one value vocabulary for every split, drawn from task.seed; 0: new vocabularies "
            "per split (training, validation, each evaluation length), as the reference"},
           {"distinct_queries", 0, 0, 1, true,
            "1: a sample's queries ask distinct keys; 0: drawn with replacement, as the reference"}},
          make_mqmtar};
}

}  // namespace lengen
