// Task::answer_sources: the source positions that answer each target symbol, per task, checked
// against the symbols themselves; tasks without a known answering key say so.
#include <gtest/gtest.h>

#include <optional>

#include "lengen/task.h"

namespace lengen {
namespace {

constexpr uint64_t kSourcesSeed = 11;

std::vector<Sample> draw(const Task& task, int64_t length, int count) {
  Rng rng(3);
  std::vector<Sample> samples;
  for (int i = 0; i < count; ++i) samples.push_back(task.sample(rng, length));
  return samples;
}

TEST(AnswerSources, CopyAndReverseNameTheSourcePositionBeingOutput) {
  const Sample sample{{5, 6, 7}, {5, 6, 7}};
  EXPECT_EQ(make_task("copy", {}, kSourcesSeed)->answer_sources(sample), (AnswerSources{{0}, {1}, {2}}));
  const Sample reversed{{5, 6, 7}, {7, 6, 5}};
  EXPECT_EQ(make_task("reverse", {}, kSourcesSeed)->answer_sources(reversed), (AnswerSources{{2}, {1}, {0}}));
}

// A reference file may pair a source with a longer target: its symbols past the source's length
// have no answering key (never a position outside the source).
TEST(AnswerSources, CopyAndReverseTargetsLongerThanTheSourceHaveNoAnswerPastIt) {
  const Sample longer{{5, 6}, {5, 6, 5, 6}};
  EXPECT_EQ(make_task("copy", {}, kSourcesSeed)->answer_sources(longer), (AnswerSources{{0}, {1}, {}, {}}));
  EXPECT_EQ(make_task("reverse", {}, kSourcesSeed)->answer_sources(longer), (AnswerSources{{1}, {0}, {}, {}}));
}

TEST(AnswerSources, SortNamesEveryPositionHoldingTheSymbol) {
  const Sample sample{{4, 1, 4, 0}, {0, 1, 4, 4}};
  EXPECT_EQ(make_task("sort", {}, kSourcesSeed)->answer_sources(sample),
            (AnswerSources{{3}, {1}, {0, 2}, {0, 2}}));
}

TEST(AnswerSources, FlipFlopNamesTheLastWrittenBit) {
  // write 1, ignore 0, write 0, ignore 1, read: the answer is the bit at index 5.
  const Sample sample{{2, 1, 3, 0, 2, 0, 3, 1, 4}, {0}};
  EXPECT_EQ(make_task("flip_flop", {}, kSourcesSeed)->answer_sources(sample), (AnswerSources{{5}}));
}

TEST(AnswerSources, EveryAnswerHoldsTheSymbolBeingOutput) {
  for (const char* name : {"copy", "reverse", "sort", "flip_flop"}) {
    SCOPED_TRACE(name);
    auto task = make_task(name, {}, kSourcesSeed);
    for (const Sample& sample : draw(*task, 40, 20)) {
      const auto sources = task->answer_sources(sample);
      ASSERT_TRUE(sources.has_value());
      ASSERT_EQ(sources->size(), sample.trg.size());
      for (size_t j = 0; j < sample.trg.size(); ++j) {
        ASSERT_FALSE((*sources)[j].empty());
        for (int64_t i : (*sources)[j]) EXPECT_EQ(sample.src[static_cast<size_t>(i)], sample.trg[j]);
      }
    }
  }
}

TEST(AnswerSources, MqmtarNamesTheQueriedKeysValueTokens) {
  auto task = make_task("mqmtar", {{"alphabet", 16}, {"num_pairs", 50}, {"num_queries", 2}}, kSourcesSeed);
  const int64_t key_len = 2, value_len = 2;
  for (const Sample& sample : draw(*task, 60, 20)) {
    const auto sources = task->answer_sources(sample);
    ASSERT_TRUE(sources.has_value());
    ASSERT_EQ(sources->size(), sample.trg.size());
    const size_t haystack = sample.src.size() - 2 * (1 + key_len);
    for (size_t q = 0; q < 2; ++q) {
      const size_t base = q * (1 + value_len);
      EXPECT_TRUE((*sources)[base].empty()) << "the QSEP of a query has no answering key";
      const auto& keys = (*sources)[base + 1];
      ASSERT_EQ(keys.size(), static_cast<size_t>(value_len));
      EXPECT_EQ((*sources)[base + 2], keys);
      // The value follows "key KVSEP" in the haystack, and the key is the query's.
      const auto start = static_cast<size_t>(keys[0]);
      ASSERT_LT(static_cast<size_t>(keys[1]), haystack);
      EXPECT_EQ(sample.src[start - 1], 1);  // KVSEP
      for (int64_t k = 0; k < key_len; ++k) {
        EXPECT_EQ(sample.src[start - 1 - static_cast<size_t>(key_len) + static_cast<size_t>(k)],
                  sample.src[haystack + q * (1 + key_len) + 1 + static_cast<size_t>(k)]);
      }
      for (int64_t v = 0; v < value_len; ++v) {
        EXPECT_EQ(sample.src[static_cast<size_t>(keys[static_cast<size_t>(v)])],
                  sample.trg[base + 1 + static_cast<size_t>(v)]);
      }
    }
  }
}

TEST(AnswerSources, NBackNamesTheSymbolNBack) {
  auto task = make_task("n_back", {{"n", 3}}, kSourcesSeed);
  for (const Sample& sample : draw(*task, 40, 10)) {
    const auto sources = task->answer_sources(sample);
    ASSERT_TRUE(sources.has_value());
    ASSERT_EQ(sources->size(), sample.trg.size());
    for (size_t j = 0; j < sample.trg.size(); ++j) {
      if (j < 3) {
        EXPECT_TRUE((*sources)[j].empty()) << "nothing 3 back";
        continue;
      }
      ASSERT_EQ((*sources)[j], std::vector<int64_t>{static_cast<int64_t>(j) - 3});
      EXPECT_EQ(sample.src[j - 3], sample.trg[j]);
    }
  }
}

TEST(AnswerSources, TasksWithoutAKnownAnswerSaySo) {
  for (const char* name : {"parity", "local_count"}) {
    SCOPED_TRACE(name);
    auto task = make_task(name, {}, kSourcesSeed);
    EXPECT_FALSE(task->answer_sources(draw(*task, 40, 1).front()).has_value());
  }
}

}  // namespace
}  // namespace lengen
