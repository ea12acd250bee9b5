// Each task against files written by the reference generator (tests/data/reference_tasks, with
// the command that made them): the sizes of the sources for a length, the frequencies of the
// symbols, the rule that gives the target, and for mqmtar how keys, values and queries are drawn,
// with a memorisation probe. lengen's samples are drawn with the same parameters from the same
// length range (training: 32..64; test: 64, and 256 for mqmtar).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "lengen/task.h"
#include "lengen/task_files.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

constexpr uint64_t kFidelitySeed = 1;
constexpr int64_t kTrainMin = 32;
constexpr int64_t kTrainMax = 64;
constexpr int kOwnSamples = 2000;
// Symbol ids in the files stay below this for every task here.
constexpr int64_t kAnySymbol = 1000;

std::string reference_stem(const std::string& task, const std::string& split) {
  return std::string(LENGEN_TEST_DATA_DIR) + "/reference_tasks/" + task + "/" + split;
}

std::vector<Sample> reference(const std::string& task, const std::string& split) {
  return read_samples(reference_stem(task, split), kAnySymbol);
}

std::vector<Sample> own_training(const Task& task, int count = kOwnSamples) {
  return generated_data(task, kTrainMin, kTrainMax, 7)->batch(0, 0, count);
}

std::vector<Sample> own_test(const Task& task, int64_t length, int count = 200) {
  return fixed_samples(task, length, count, 8);
}

using Histogram = std::map<int32_t, double>;

// The symbols a frequency table tells apart (all of them, unless a task lumps some together).
using SymbolClass = std::function<int32_t(int32_t)>;
int32_t itself(int32_t symbol) { return symbol; }

Histogram frequencies(const std::vector<Sample>& samples, const Symbols Sample::*part,
                      const SymbolClass& symbol_class = itself) {
  Histogram histogram;
  double total = 0;
  for (const Sample& sample : samples) {
    for (int32_t symbol : sample.*part) histogram[symbol_class(symbol)] += 1;
    total += static_cast<double>((sample.*part).size());
  }
  for (auto& [symbol, count] : histogram) count /= total;
  return histogram;
}

// Total variation distance: half the summed absolute difference of the two distributions.
double distance(const Histogram& a, const Histogram& b) {
  std::set<int32_t> symbols;
  for (const auto& [symbol, p] : a) symbols.insert(symbol);
  for (const auto& [symbol, p] : b) symbols.insert(symbol);
  double sum = 0;
  for (int32_t symbol : symbols) {
    const auto in_a = a.find(symbol), in_b = b.find(symbol);
    sum += std::abs((in_a == a.end() ? 0 : in_a->second) - (in_b == b.end() ? 0 : in_b->second));
  }
  return sum / 2;
}

double mean_size(const std::vector<Sample>& samples, const Symbols Sample::*part) {
  double sum = 0;
  for (const Sample& sample : samples) sum += static_cast<double>((sample.*part).size());
  return sum / static_cast<double>(samples.size());
}

// What a task's target must be, written here from the task's definition.
using TargetRule = std::function<Symbols(const Symbols& src)>;

// Sources of lengen and of the reference share their symbol frequencies, their sizes and the
// target rule, in training (lengths 32..64) and at test length 64.
void expect_same_task(const std::string& name, const TaskParams& params, const TargetRule& rule,
                      double tolerance = 0.04, double size_tolerance = 2.0, const SymbolClass& symbol_class = itself) {
  auto task = make_task(name, params, kFidelitySeed);
  const auto ours = own_training(*task);
  const auto theirs = reference(name, "train");
  for (const auto* samples : {&ours, &theirs}) {
    const std::string who = samples == &ours ? "lengen" : "reference";
    for (const Sample& sample : *samples) ASSERT_EQ(sample.trg, rule(sample.src)) << who;
  }
  EXPECT_LT(distance(frequencies(ours, &Sample::src, symbol_class), frequencies(theirs, &Sample::src, symbol_class)),
            tolerance);
  EXPECT_LT(distance(frequencies(ours, &Sample::trg, symbol_class), frequencies(theirs, &Sample::trg, symbol_class)),
            tolerance);
  EXPECT_NEAR(mean_size(ours, &Sample::src), mean_size(theirs, &Sample::src), size_tolerance);
  EXPECT_NEAR(mean_size(ours, &Sample::trg), mean_size(theirs, &Sample::trg), size_tolerance);
  const auto test_ours = own_test(*task, 64);
  const auto test_theirs = reference(name, "test_0_64");
  if (const auto expected = task->source_length(64)) {
    for (const Sample& sample : test_theirs) ASSERT_EQ(static_cast<int64_t>(sample.src.size()), *expected);
    for (const Sample& sample : test_ours) ASSERT_EQ(static_cast<int64_t>(sample.src.size()), *expected);
  }
  for (const Sample& sample : test_theirs) ASSERT_EQ(sample.trg, rule(sample.src)) << "reference, length 64";
}

TEST(ReferenceFidelity, Copy) {
  expect_same_task("copy", {{"vocab", 32}}, [](const Symbols& src) { return src; });
}

TEST(ReferenceFidelity, Reverse) {
  expect_same_task("reverse", {{"vocab", 32}}, [](const Symbols& src) { return Symbols(src.rbegin(), src.rend()); });
}

TEST(ReferenceFidelity, Sort) {
  expect_same_task("sort", {{"vocab", 32}}, [](Symbols src) {
    std::sort(src.begin(), src.end());
    return src;
  });
}

TEST(ReferenceFidelity, Parity) {
  expect_same_task("parity", {}, [](const Symbols& src) {
    return Symbols{std::count(src.begin(), src.end(), 1) % 2 == 0 ? 1 : 0};
  });
}

// Commands at even positions: the first writes, the last reads, and in between a write comes
// with probability 0.1 (the reference's experiments): the answer is far from the read.
TEST(ReferenceFidelity, FlipFlop) {
  expect_same_task("flip_flop", {}, [](const Symbols& src) {
    int32_t written = -1;
    for (size_t i = 0; i + 1 < src.size(); i += 2) {
      if (src[i] == 2) written = src[i + 1];
    }
    return Symbols{written};
  });
}

// A leading "nothing" (0), then symbols 1..15; the label of each position is the symbol 2 back,
// predicted in place.
TEST(ReferenceFidelity, NBack) {
  auto task = make_task("n_back", {}, kFidelitySeed);
  EXPECT_EQ(task->framing(), Framing::kLabelPerPosition);
  expect_same_task("n_back", {}, [](const Symbols& src) {
    Symbols labels(src.size(), 0);
    for (size_t i = 2; i < src.size(); ++i) labels[i] = src[i - 2];
    return labels;
  });
}

// Runs of one symbol (no two adjacent runs alike), the label of each position its index within
// its run, predicted in place. The reference's sources only average L symbols (it draws a count
// of runs), so sizes are compared on average.
TEST(ReferenceFidelity, LocalCount) {
  auto task = make_task("local_count", {{"max_reps", 8}}, kFidelitySeed);
  EXPECT_EQ(task->framing(), Framing::kLabelPerPosition);
  expect_same_task(
      "local_count", {{"max_reps", 8}},
      [](const Symbols& src) {
        Symbols labels;
        for (size_t i = 0; i < src.size(); ++i) labels.push_back(i > 0 && src[i] == src[i - 1] ? labels.back() + 1 : 0);
        return labels;
      },
      0.06, 4.0);
}

// mqmtar: SPACE 0, KVSEP 1, QSEP 2, letters from 3; two-letter keys and values over 16 letters, a
// vocabulary of 64 keys and 64 values, 4 queries.
const TaskParams kMqmtarParams = {{"alphabet", 16}, {"key_len", 2}, {"value_len", 2}, {"num_pairs", 64},
                                  {"num_queries", 4}};
constexpr size_t kQueries = 4;

struct ReferenceRecord {
  Symbols key;
  Symbols value;
  int64_t at;  // where the key starts
};

struct Parsed {
  std::vector<ReferenceRecord> records;
  std::vector<Symbols> queries;
  int64_t haystack = 0;
};

Parsed parse(const Sample& sample) {
  Parsed parsed;
  parsed.haystack = static_cast<int64_t>(sample.src.size()) - 3 * static_cast<int64_t>(kQueries);
  for (int64_t i = 0; i < parsed.haystack;) {
    if (sample.src[i] == 0) {
      ++i;
      continue;
    }
    parsed.records.push_back({Symbols(sample.src.begin() + i, sample.src.begin() + i + 2),
                              Symbols(sample.src.begin() + i + 3, sample.src.begin() + i + 5), i});
    i += 5;
  }
  for (size_t q = 0; q < kQueries; ++q) {
    const auto query = sample.src.begin() + parsed.haystack + 3 * q;
    parsed.queries.emplace_back(query + 1, query + 3);
  }
  return parsed;
}

// The target rule: per query, QSEP and the value written after the query's key in this sample.
Symbols mqmtar_target(const Sample& sample) {
  const Parsed parsed = parse(sample);
  Symbols target;
  for (const Symbols& query : parsed.queries) {
    target.push_back(2);
    for (const ReferenceRecord& record : parsed.records) {
      if (record.key == query) target.insert(target.end(), record.value.begin(), record.value.end());
    }
  }
  return target;
}

// Figures that tell how a data set of mqmtar was drawn.
struct RecallFigures {
  double values_per_key = 0;        // distinct values a key carries across the samples
  double repeated_queries = 0;      // share of samples that ask one key twice
  std::map<int64_t, double> spaces_before;  // SPACEs before a record in its slot, as a distribution
};

RecallFigures figures(const std::vector<Sample>& samples) {
  std::map<Symbols, std::set<Symbols>> values;
  RecallFigures result;
  double records = 0;
  for (const Sample& sample : samples) {
    const Parsed parsed = parse(sample);
    const auto count = static_cast<int64_t>(parsed.records.size());
    const int64_t slot = parsed.haystack / count;
    for (int64_t r = 0; r < count; ++r) {
      values[parsed.records[r].key].insert(parsed.records[r].value);
      result.spaces_before[parsed.records[r].at - r * slot] += 1;
      records += 1;
    }
    result.repeated_queries +=
        std::set<Symbols>(parsed.queries.begin(), parsed.queries.end()).size() < parsed.queries.size();
  }
  for (const auto& [key, seen] : values) result.values_per_key += static_cast<double>(seen.size());
  result.values_per_key /= static_cast<double>(values.size());
  result.repeated_queries /= static_cast<double>(samples.size());
  for (auto& [spaces, share] : result.spaces_before) share /= records;
  return result;
}

double distance(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b) {
  Histogram ha, hb;
  for (const auto& [k, v] : a) ha[static_cast<int32_t>(k)] = v;
  for (const auto& [k, v] : b) hb[static_cast<int32_t>(k)] = v;
  return distance(ha, hb);
}

// A key -> value table read off training samples (each key's most frequent value), asked the
// queries of test samples: the share of queried values it gets right. On a task where values are
// bound per sample this is chance: the model must read the value from the context.
double memorised_answers(const std::vector<Sample>& train, const std::vector<Sample>& test) {
  std::map<Symbols, std::map<Symbols, int>> counts;
  for (const Sample& sample : train) {
    for (const ReferenceRecord& record : parse(sample).records) ++counts[record.key][record.value];
  }
  double right = 0, asked = 0;
  for (const Sample& sample : test) {
    const Parsed parsed = parse(sample);
    const Symbols target = mqmtar_target(sample);
    for (size_t q = 0; q < parsed.queries.size(); ++q) {
      asked += 1;
      const auto known = counts.find(parsed.queries[q]);
      if (known == counts.end()) continue;
      const auto best = std::max_element(known->second.begin(), known->second.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      right += Symbols(target.begin() + 3 * q + 1, target.begin() + 3 * q + 3) == best->first;
    }
  }
  return right / asked;
}

// The share of the test samples' queried keys that occur in the training samples.
double seen_query_keys(const std::vector<Sample>& train, const std::vector<Sample>& test) {
  std::set<Symbols> keys;
  for (const Sample& sample : train) {
    for (const ReferenceRecord& record : parse(sample).records) keys.insert(record.key);
  }
  double seen = 0, asked = 0;
  for (const Sample& sample : test) {
    for (const Symbols& query : parse(sample).queries) {
      asked += 1;
      seen += keys.count(query) > 0;
    }
  }
  return seen / asked;
}

TEST(ReferenceFidelity, MqmtarSizesSymbolsAndTargets) {
  // Which letters occur depends on the split's vocabulary draw: the letters count as one class.
  expect_same_task(
      "mqmtar", kMqmtarParams, [](const Symbols& src) { return mqmtar_target({src, {}}); }, 0.02, 2.0,
      [](int32_t symbol) { return std::min(symbol, 3); });
  auto task = make_task("mqmtar", kMqmtarParams, kFidelitySeed);
  for (int64_t length : {64, 256}) {
    const auto theirs = reference("mqmtar", "test_" + std::string(length == 64 ? "0" : "1") + "_" +
                                                std::to_string(length));
    const auto ours = own_test(*task, length);
    // floor(0.8 L / 6) records, each in a slot of floor(L / records) symbols.
    const size_t records = static_cast<size_t>(4 * length / 30);
    for (const auto* samples : {&ours, &theirs}) {
      for (const Sample& sample : *samples) {
        ASSERT_EQ(parse(sample).records.size(), records) << length;
        ASSERT_EQ(static_cast<int64_t>(sample.src.size()), *task->source_length(length));
        ASSERT_EQ(sample.trg, mqmtar_target(sample));
      }
    }
    EXPECT_LT(distance(figures(ours).spaces_before, figures(theirs).spaces_before), 0.06)
        << "records sit in their slots as the reference places them, length " << length;
  }
}

TEST(ReferenceFidelity, MqmtarBindsValuesPerSampleAndDrawsQueriesWithReplacement) {
  auto task = make_task("mqmtar", kMqmtarParams, kFidelitySeed);
  const RecallFigures ours = figures(own_training(*task, 1000));
  const RecallFigures theirs = figures(reference("mqmtar", "train"));
  // The reference: ~40 distinct values per key over 1,000 samples; a fixed key -> value table: 1.
  EXPECT_GT(theirs.values_per_key, 20);
  EXPECT_NEAR(ours.values_per_key, theirs.values_per_key, 0.15 * theirs.values_per_key);
  EXPECT_GT(theirs.repeated_queries, 0.2);
  EXPECT_NEAR(ours.repeated_queries, theirs.repeated_queries, 0.08);
}

TEST(ReferenceFidelity, MqmtarCannotBeAnsweredFromMemory) {
  auto task = make_task("mqmtar", kMqmtarParams, kFidelitySeed);
  // Splits as lengen draws them: training and each evaluation length from their own seeds.
  const auto train = own_training(*task, 1000);
  const auto theirs_train = reference("mqmtar", "train");
  for (int64_t length : {64, 256}) {
    const auto test = own_test(*task, length);
    const auto theirs_test = reference("mqmtar", "test_" + std::string(length == 64 ? "0" : "1") + "_" +
                                                     std::to_string(length));
    // Chance is about 1/64 per value; a table learned from training answers no better.
    EXPECT_LT(memorised_answers(theirs_train, theirs_test), 0.08) << "reference, length " << length;
    EXPECT_LT(memorised_answers(train, test), 0.08) << "lengen, length " << length;
    // Vocabularies per split: most queried test keys never occur in training (64 of 256 keys).
    EXPECT_LT(seen_query_keys(theirs_train, theirs_test), 0.6) << "reference, length " << length;
    EXPECT_LT(seen_query_keys(train, test), 0.6) << "lengen, length " << length;
  }
}

}  // namespace
}  // namespace lengen
