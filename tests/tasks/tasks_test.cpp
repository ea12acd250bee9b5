// Every task: properties shared by all (a table over task names), then each task's own
// meaning checked sample by sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "lengen/errors.h"
#include "lengen/task.h"
#include "lengen/task_parameters.h"
#include "lengen/training_data.h"

namespace lengen {
namespace {

constexpr uint64_t kTaskSeed = 11;
constexpr int kSamples = 200;

std::vector<Sample> draw(const Task& task, uint64_t seed, int count, int64_t min_len, int64_t max_len) {
  Rng rng(seed);
  std::vector<Sample> samples;
  for (int i = 0; i < count; ++i) samples.push_back(task.sample(rng, uniform_int(rng, min_len, max_len)));
  return samples;
}

bool same(const std::vector<Sample>& a, const std::vector<Sample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].src != b[i].src || a[i].trg != b[i].trg) return false;
  }
  return true;
}

class EveryTask : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryTask, SourceLengthAndSymbolsInRange) {
  auto task = make_task(GetParam(), {}, kTaskSeed);
  Rng rng(5);
  for (int64_t length : {task->min_length(), task->min_length() + 1, int64_t{64}, int64_t{257}}) {
    for (int i = 0; i < 20; ++i) {
      Sample sample = task->sample(rng, length);
      // Local count's sources from the reference vary in size; lengen's own are exactly L.
      const int64_t expected = task->source_length(length).value_or(length);
      ASSERT_EQ(static_cast<int64_t>(sample.src.size()), expected) << "L=" << length;
      ASSERT_FALSE(sample.trg.empty());
      ASSERT_EQ(sample.framing, task->framing());
      if (sample.framing == Framing::kLabelPerPosition) {
        ASSERT_EQ(sample.trg.size(), sample.src.size());
      }
      for (const Symbols* symbols : {&sample.src, &sample.trg}) {
        for (int32_t symbol : *symbols) {
          ASSERT_GE(symbol, 0);
          ASSERT_LT(symbol, task->num_symbols());
        }
      }
    }
  }
}

// A length below the task's minimum has no valid sample: a UserError naming it, never a sample
// drawn out of bounds.
TEST_P(EveryTask, FixedSamplesBelowTheMinimumLengthAreAUserError) {
  auto task = make_task(GetParam(), {}, kTaskSeed);
  EXPECT_THROW(fixed_samples(*task, task->min_length() - 1, 1, 0), UserError);
  EXPECT_EQ(fixed_samples(*task, task->min_length(), 2, 0).size(), 2u);
}

TEST_P(EveryTask, SameSeedSameDataOtherSeedOtherData) {
  auto task = make_task(GetParam(), {}, kTaskSeed);
  const int64_t low = std::max<int64_t>(task->min_length(), 32);
  auto first = draw(*task, 1, 50, low, low + 32);
  EXPECT_TRUE(same(first, draw(*task, 1, 50, low, low + 32)));
  EXPECT_TRUE(same(first, draw(*make_task(GetParam(), {}, kTaskSeed), 1, 50, low, low + 32)));
  EXPECT_FALSE(same(first, draw(*task, 2, 50, low, low + 32)));
}

TEST_P(EveryTask, ResolvedParamsRebuildTheSameTask) {
  auto task = make_task(GetParam(), {}, kTaskSeed);
  EXPECT_EQ(task->name(), GetParam());
  auto rebuilt = make_task(GetParam(), task->params(), kTaskSeed);
  EXPECT_EQ(rebuilt->params(), task->params());
  EXPECT_TRUE(
      same(draw(*task, 3, 20, task->min_length(), 80), draw(*rebuilt, 3, 20, task->min_length(), 80)));
}

TEST_P(EveryTask, UnknownParameterIsNamedWithASuggestion) {
  auto task = make_task(GetParam(), {}, kTaskSeed);
  TaskParams params = task->params();
  std::string typo = params.empty() ? "vocab" : params.begin()->first + "x";
  try {
    make_task(GetParam(), {{typo, 1}}, kTaskSeed);
    FAIL() << "no error for " << typo;
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'" + typo + "'"), std::string::npos) << message;
    if (!params.empty()) {
      EXPECT_NE(message.find("did you mean '" + params.begin()->first + "'"), std::string::npos) << message;
    }
  }
}

// The list of a task's parameters is what it reads: its defaults are what params() reports, and
// every bound of the list is enforced with a message naming the parameter.
TEST_P(EveryTask, ParameterListGivesTheDefaultsAndTheBounds) {
  const std::vector<TaskParameter>& parameters = task_parameters(GetParam());
  TaskParams defaults;
  for (const TaskParameter& parameter : parameters) defaults[parameter.name] = parameter.default_value;
  EXPECT_EQ(make_task(GetParam(), {}, kTaskSeed)->params(), defaults);
  for (const TaskParameter& parameter : parameters) {
    const double below = parameter.integer ? parameter.min - 1 : parameter.min;
    try {
      make_task(GetParam(), {{parameter.name, below}}, kTaskSeed);
      FAIL() << parameter.name << " = " << below << " accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("parameter '" + parameter.name + "' must be"), std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(parameter.meaning.empty()) << parameter.name;
  }
}

// The model's embedding grows with a task's symbols: a symbol count above kMaxTaskSymbols is
// refused with the bound stated and the value as typed, and the largest allowed one builds.
TEST_P(EveryTask, TheSymbolCountIsBoundedAndTheBoundIsStated) {
  for (const TaskParameter& parameter : task_parameters(GetParam())) {
    if (parameter.name != "vocab" && parameter.name != "alphabet") continue;
    EXPECT_LE(parameter.max, kMaxTaskSymbols) << parameter.name;
    EXPECT_LE(make_task(GetParam(), {{parameter.name, parameter.max}}, kTaskSeed)->num_symbols(),
              static_cast<int64_t>(kMaxTaskSymbols))
        << parameter.name;
    try {
      make_task(GetParam(), {{parameter.name, 1e9}}, kTaskSeed);
      FAIL() << parameter.name << " = 1e9 accepted";
    } catch (const UserError& e) {
      const std::string bound = "in [" + std::to_string(static_cast<int64_t>(parameter.min)) + ", " +
                                std::to_string(static_cast<int64_t>(parameter.max)) + "], got 1000000000";
      EXPECT_NE(std::string(e.what()).find(bound), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tasks, EveryTask, ::testing::ValuesIn(task_names()),
                         [](const auto& info) { return info.param; });

TEST(TaskRegistry, NamesEveryTaskAndSuggestsOnTypos) {
  std::vector<std::string> expected = {"copy",      "reverse", "sort",        "parity",
                                       "flip_flop", "n_back",  "local_count", "mqmtar"};
  EXPECT_EQ(task_names(), expected);
  try {
    make_task("revrese", {}, 0);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'reverse'"), std::string::npos) << e.what();
  }
}

TEST(CopyReverseSort, TargetsFollowTheSource) {
  auto copy = make_task("copy", {{"vocab", 5}}, 0);
  auto reverse = make_task("reverse", {{"vocab", 5}}, 0);
  auto sort = make_task("sort", {{"vocab", 5}}, 0);
  std::set<int32_t> seen;
  for (const Sample& s : draw(*copy, 1, kSamples, 1, 40)) {
    EXPECT_EQ(s.trg, s.src);
    seen.insert(s.src.begin(), s.src.end());
  }
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2, 3, 4}));
  for (const Sample& s : draw(*reverse, 1, kSamples, 1, 40))
    EXPECT_EQ(s.trg, Symbols(s.src.rbegin(), s.src.rend()));
  for (const Sample& s : draw(*sort, 1, kSamples, 1, 40)) {
    EXPECT_TRUE(std::is_sorted(s.trg.begin(), s.trg.end()));
    EXPECT_TRUE(std::is_permutation(s.trg.begin(), s.trg.end(), s.src.begin(), s.src.end()));
  }
}

TEST(Parity, TargetIsOneWhenTheOnesAreEven) {
  auto task = make_task("parity", {}, 0);
  EXPECT_EQ(task->num_symbols(), 2);
  for (const Sample& s : draw(*task, 1, kSamples, 1, 40)) {
    int64_t ones = std::count(s.src.begin(), s.src.end(), 1);
    EXPECT_EQ(s.trg, Symbols{ones % 2 == 0 ? 1 : 0});
  }
}

TEST(FlipFlop, AnswerIsTheLastWrittenBit) {
  constexpr int32_t kWrite = 2, kIgnore = 3, kRead = 4;
  auto task = make_task("flip_flop", {{"write_prob", 0.3}}, 0);
  int ignores = 0;
  for (const Sample& s : draw(*task, 1, kSamples, 4, 41)) {
    ASSERT_EQ(s.src.size() % 2, 1u);
    EXPECT_EQ(s.src.front(), kWrite);
    EXPECT_EQ(s.src.back(), kRead);
    int32_t last_written = -1;
    for (size_t i = 0; i + 1 < s.src.size(); i += 2) {
      ASSERT_TRUE(s.src[i] == kWrite || s.src[i] == kIgnore);
      ASSERT_TRUE(s.src[i + 1] == 0 || s.src[i + 1] == 1);
      if (s.src[i] == kWrite) last_written = s.src[i + 1];
      ignores += s.src[i] == kIgnore;
    }
    EXPECT_EQ(s.trg, Symbols{last_written});
  }
  EXPECT_GT(ignores, 0);
}

TEST(FlipFlop, PairsAreHalfTheLengthRoundedDown) {
  auto task = make_task("flip_flop", {}, 0);
  EXPECT_EQ(task->source_length(64), 63);
  EXPECT_EQ(task->source_length(65), 63);
  EXPECT_EQ(task->min_length(), 4);
}

TEST(FlipFlop, WritesAreSparseByDefault) {
  auto task = make_task("flip_flop", {}, 0);
  EXPECT_EQ(task->params().at("write_prob"), 0.1);
}

TEST(NBack, LabelIsTheSymbolNPositionsBack) {
  auto task = make_task("n_back", {{"n", 3}, {"vocab", 6}}, 0);
  EXPECT_EQ(task->min_length(), 4);
  EXPECT_EQ(task->source_length(40), 41);
  EXPECT_EQ(task->framing(), Framing::kLabelPerPosition);
  for (const Sample& s : draw(*task, 1, kSamples, 4, 40)) {
    ASSERT_EQ(s.trg.size(), s.src.size());
    EXPECT_EQ(s.src[0], 0) << "a leading 'nothing', as the reference writes it";
    for (size_t i = 0; i < s.src.size(); ++i) {
      if (i > 0) {
        EXPECT_GE(s.src[i], 1) << "0 is reserved for 'nothing n back'";
      }
      EXPECT_EQ(s.trg[i], i < 3 ? 0 : s.src[i - 3]);
    }
  }
}

TEST(LabellingTasks, LabelsAfterSourceIsTheOtherFraming) {
  for (const std::string name : {"n_back", "local_count"}) {
    EXPECT_EQ(make_task(name, {}, 0)->framing(), Framing::kLabelPerPosition) << name;
    auto after = make_task(name, {{"labels_after_source", 1}}, 0);
    EXPECT_EQ(after->framing(), Framing::kTargetAfterSource) << name;
    Rng rng(3);
    EXPECT_EQ(after->sample(rng, 20).framing, Framing::kTargetAfterSource) << name;
  }
}

// Runs of (symbol, length) in a local-count source.
std::vector<std::pair<int32_t, int64_t>> runs(const Symbols& src) {
  std::vector<std::pair<int32_t, int64_t>> found;
  for (int32_t symbol : src) {
    if (found.empty() || found.back().first != symbol) found.push_back({symbol, 0});
    ++found.back().second;
  }
  return found;
}

TEST(LocalCount, TargetsIndexEachRun) {
  auto task = make_task("local_count", {{"vocab", 3}, {"max_reps", 5}}, 0);
  EXPECT_EQ(task->num_symbols(), 5);
  std::map<int64_t, int> run_lengths;
  for (const Sample& s : draw(*task, 1, kSamples, 2, 60)) {
    ASSERT_EQ(s.trg.size(), s.src.size());
    // Adjacent runs differ, so every new symbol restarts the count.
    EXPECT_EQ(s.trg[0], 0);
    for (size_t i = 1; i < s.src.size(); ++i) {
      EXPECT_EQ(s.trg[i], s.src[i] == s.src[i - 1] ? s.trg[i - 1] + 1 : 0);
    }
    for (auto [symbol, length] : runs(s.src)) {
      EXPECT_LT(symbol, 3);
      EXPECT_GE(length, 2);
      EXPECT_LE(length, 5);
      ++run_lengths[length];
    }
  }
  EXPECT_EQ(run_lengths.size(), 4u) << "every run length 2..5 occurs";
}

TEST(LocalCount, TwoRepsTileOddLengthsWithOneShortRun) {
  auto task = make_task("local_count", {{"max_reps", 2}}, 0);
  for (const Sample& s : draw(*task, 1, 50, 2, 30)) {
    int short_runs = 0;
    for (auto [symbol, length] : runs(s.src)) short_runs += length == 1;
    EXPECT_EQ(short_runs, static_cast<int>(s.src.size() % 2));
  }
}

struct Record {
  Symbols key;
  Symbols value;
};

// Parses a mqmtar haystack (SPACE 0, KVSEP 1, QSEP 2, letters from 3) into its records.
std::vector<Record> parse_records(const Symbols& haystack, int64_t key_len, int64_t value_len) {
  std::vector<Record> records;
  for (size_t i = 0; i < haystack.size();) {
    if (haystack[i] == 0) {
      ++i;
      continue;
    }
    Symbols key(haystack.begin() + i, haystack.begin() + i + key_len);
    EXPECT_EQ(haystack[i + key_len], 1) << "KVSEP after the key";
    Symbols value(haystack.begin() + i + key_len + 1, haystack.begin() + i + key_len + 1 + value_len);
    i += key_len + 1 + value_len;
    EXPECT_TRUE(i < haystack.size() && haystack[i] == 0) << "a SPACE after every record";
    records.push_back({key, value});
  }
  return records;
}

TEST(Mqmtar, AnswersMatchTheRecordsOfTheQueriedKeys) {
  TaskParams params = {
      {"alphabet", 6}, {"key_len", 2}, {"value_len", 3}, {"num_pairs", 30}, {"num_queries", 3}};
  for (const int64_t distinct_queries : {0, 1}) {
    params["distinct_queries"] = static_cast<double>(distinct_queries);
    auto task = make_task("mqmtar", params, kTaskSeed);
    EXPECT_EQ(task->num_symbols(), 9);
    int repeated_queries = 0;
    for (int64_t length : {task->min_length(), int64_t{64}, int64_t{300}}) {
      const int64_t records_expected = std::min<int64_t>(4 * length / (5 * 7), 30);
      const int64_t haystack_length = records_expected * (length / records_expected);
      ASSERT_EQ(task->source_length(length), haystack_length + 3 * 3);
      Rng rng(static_cast<uint64_t>(length));
      for (int n = 0; n < 50; ++n) {
        Sample s = task->sample(rng, length);
        Symbols haystack(s.src.begin(), s.src.begin() + haystack_length);
        std::vector<Record> records = parse_records(haystack, 2, 3);
        EXPECT_EQ(static_cast<int64_t>(records.size()), records_expected);
        std::map<Symbols, Symbols> lookup;
        std::set<Symbols> values;
        for (const auto& r : records) {
          EXPECT_TRUE(lookup.emplace(r.key, r.value).second) << "keys distinct";
          EXPECT_TRUE(values.insert(r.value).second) << "values distinct";
        }
        ASSERT_EQ(s.trg.size(), 3u * 4u);
        std::set<Symbols> queried;
        for (size_t q = 0; q < 3; ++q) {
          auto query = s.src.begin() + haystack_length + q * 3;
          ASSERT_EQ(*query, 2) << "QSEP";
          Symbols key(query + 1, query + 3);
          ASSERT_TRUE(lookup.count(key)) << "query key occurs in the source";
          repeated_queries += !queried.insert(key).second;
          EXPECT_EQ(s.trg[q * 4], 2);
          EXPECT_EQ(Symbols(s.trg.begin() + q * 4 + 1, s.trg.begin() + q * 4 + 4), lookup[key]);
        }
      }
    }
    if (distinct_queries != 0) {
      EXPECT_EQ(repeated_queries, 0);
    } else {
      EXPECT_GT(repeated_queries, 0) << "queries drawn with replacement repeat a key now and then";
    }
  }
}

// Every key -> the set of values it carries over many samples of one split.
std::map<Symbols, std::set<Symbols>> observed_pairs(const Task& task, uint64_t sample_seed) {
  std::map<Symbols, std::set<Symbols>> pairs;
  for (const Sample& s : draw(task, sample_seed, 200, 100, 100)) {
    const int64_t haystack = static_cast<int64_t>(s.src.size()) - 4 * 3;
    for (const auto& r : parse_records(Symbols(s.src.begin(), s.src.begin() + haystack), 2, 2))
      pairs[r.key].insert(r.value);
  }
  return pairs;
}

std::set<Symbols> keys_of(const std::map<Symbols, std::set<Symbols>>& pairs) {
  std::set<Symbols> keys;
  for (const auto& [key, values] : pairs) keys.insert(key);
  return keys;
}

// The value of a key exists only in its sample: across samples a key carries many values.
TEST(Mqmtar, ValuesAreBoundPerSample) {
  auto task = make_task("mqmtar", {{"alphabet", 16}, {"num_pairs", 40}}, kTaskSeed);
  const auto pairs = observed_pairs(*task, 1);
  EXPECT_EQ(pairs.size(), 40u) << "keys come from the vocabulary of 40";
  double values_per_key = 0;
  for (const auto& [key, values] : pairs) values_per_key += static_cast<double>(values.size());
  values_per_key /= static_cast<double>(pairs.size());
  // 200 samples of 13 records from 40 pairs: each key appears ~65 times, with ~33 of 40 values.
  EXPECT_GT(values_per_key, 20.0);
}

// Each split draws its own vocabularies from its seed (as the reference draws them per file); with
// shared_vocabulary every split uses the one drawn from the task seed.
TEST(Mqmtar, SplitsDrawTheirOwnVocabulary) {
  TaskParams params = {{"alphabet", 16}, {"num_pairs", 40}};
  auto task = make_task("mqmtar", params, kTaskSeed);
  const SplitTask train(*task, 101), again(*task, 101), test(*task, 202);
  const auto train_keys = keys_of(observed_pairs(*train, 1));
  EXPECT_EQ(train_keys, keys_of(observed_pairs(*again, 2))) << "a split's vocabulary comes from its seed";
  const auto test_keys = keys_of(observed_pairs(*test, 1));
  EXPECT_NE(train_keys, test_keys);
  std::vector<Symbols> shared_keys;
  std::set_intersection(train_keys.begin(), train_keys.end(), test_keys.begin(), test_keys.end(),
                        std::back_inserter(shared_keys));
  // Two draws of 40 keys from 256: about 6 in common.
  EXPECT_LT(shared_keys.size(), 20u);

  params["shared_vocabulary"] = 1;
  auto shared = make_task("mqmtar", params, kTaskSeed);
  const SplitTask shared_train(*shared, 101), shared_test(*shared, 202);
  EXPECT_EQ(keys_of(observed_pairs(*shared_train, 1)), keys_of(observed_pairs(*shared_test, 1)));
  auto other_seed = make_task("mqmtar", params, kTaskSeed + 1);
  const SplitTask other_train(*other_seed, 101);
  EXPECT_NE(keys_of(observed_pairs(*shared_train, 1)), keys_of(observed_pairs(*other_train, 1)))
      << "the shared vocabulary comes from the task seed";
}

TEST(Mqmtar, MinLengthFitsTheQueries) {
  auto task = make_task("mqmtar", {{"num_queries", 4}}, 0);
  // 4 records of k + v + 2 = 6 symbols need 0.8 L >= 24; each record has a slot of floor(30 / 4).
  EXPECT_EQ(task->min_length(), 30);
  EXPECT_EQ(task->source_length(30), 4 * 7 + 4 * 3);
}

struct BadParams {
  std::string task;
  TaskParams params;
  std::string named;  // the parameter the message must name
};

class InvalidParams : public ::testing::TestWithParam<BadParams> {};

TEST_P(InvalidParams, MessageNamesTheParameterAndValue) {
  const BadParams& bad = GetParam();
  try {
    make_task(bad.task, bad.params, 0);
    FAIL() << "accepted";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'" + bad.named + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(bad.task), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tasks, InvalidParams,
    ::testing::Values(
        BadParams{"copy", {{"vocab", 1}}, "vocab"}, BadParams{"sort", {{"vocab", 2.5}}, "vocab"},
        BadParams{"reverse", {{"vocab", -3}}, "vocab"}, BadParams{"parity", {{"vocab", 3}}, "vocab"},
        BadParams{"flip_flop", {{"write_prob", 0}}, "write_prob"},
        BadParams{"flip_flop", {{"write_prob", 1}}, "write_prob"}, BadParams{"n_back", {{"n", 0}}, "n"},
        BadParams{"n_back", {{"vocab", 1}}, "vocab"}, BadParams{"local_count", {{"max_reps", 1}}, "max_reps"},
        BadParams{"local_count", {{"vocab", 1}}, "vocab"},
        BadParams{"mqmtar", {{"alphabet", 10}, {"num_pairs", 101}}, "num_pairs"},
        BadParams{"mqmtar", {{"alphabet", 100}, {"value_len", 1}, {"num_pairs", 101}}, "num_pairs"},
        BadParams{"mqmtar", {{"num_pairs", 3}}, "num_queries"},
        BadParams{"mqmtar", {{"key_len", 0}}, "key_len"},
        BadParams{"mqmtar", {{"alphabet", 1e300}}, "alphabet"}));

}  // namespace
}  // namespace lengen
