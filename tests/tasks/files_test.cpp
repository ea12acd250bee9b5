#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lengen/content_hash.h"
#include "lengen/errors.h"
#include "lengen/task_files.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class TaskFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("lengen_files_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string stem(const std::string& name) const { return (dir_ / name).string(); }
  void write_text(const std::string& path, const std::string& text) const { std::ofstream(path) << text; }
  std::string read_text(const std::string& path) const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The error for reading data.src / data.trg with these contents.
  std::string read_error(const std::string& src, const std::string& trg, int64_t num_symbols = 10) const {
    write_text(stem("data") + ".src", src);
    write_text(stem("data") + ".trg", trg);
    try {
      read_samples(stem("data"), num_symbols);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

TEST_F(TaskFiles, WritesTheReferenceFormatAndReadsItBack) {
  std::vector<Sample> samples = {{{1, 22, 3}, {3, 22, 1}}, {{0}, {1}}, {{12345, 7}, {9}}};
  write_samples(stem("train"), samples);
  EXPECT_EQ(read_text(stem("train") + ".src"), "1 22 3\n0\n12345 7\n");
  EXPECT_EQ(read_text(stem("train") + ".trg"), "3 22 1\n1\n9\n");
  EXPECT_FALSE(fs::exists(stem("train") + ".src.part"));
  std::vector<Sample> back = read_samples(stem("train"), 12346);
  ASSERT_EQ(back.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(back[i].src, samples[i].src);
    EXPECT_EQ(back[i].trg, samples[i].trg);
  }
}

// The hash of the bytes read is the hash of the files (both, source first), the one results.json
// and training_data.json record: a run records what it read.
TEST_F(TaskFiles, TheHashOfWhatWasReadIsTheFilesHash) {
  write_samples(stem("train"), {{{1, 2, 3}, {3, 2, 1}}, {{0}, {1}}});
  std::string read_hash;
  read_samples(stem("train"), 4, Framing::kTargetAfterSource, &read_hash);
  ContentHash files;
  files.add_file(stem("train") + ".src");
  files.add_file(stem("train") + ".trg");
  EXPECT_EQ(read_hash, files.hex());
  write_samples(stem("other"), {{{1, 2, 3}, {3, 2, 1}}, {{0}, {2}}});
  std::string other_hash;
  read_samples(stem("other"), 4, Framing::kTargetAfterSource, &other_hash);
  EXPECT_NE(other_hash, read_hash);
}

TEST_F(TaskFiles, ReadsWithoutFinalNewlineAndWithCrLf) {
  write_text(stem("data") + ".src", "1 2\r\n3");
  write_text(stem("data") + ".trg", "2 1\r\n3\n");
  std::vector<Sample> samples = read_samples(stem("data"), 4);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].src, (Symbols{1, 2}));
  EXPECT_EQ(samples[1].src, (Symbols{3}));
  EXPECT_EQ(samples[1].trg, (Symbols{3}));
}

TEST_F(TaskFiles, UnfinishedWriterLeavesNothing) {
  {
    SampleWriter writer(stem("train"));
    writer.write({{1}, {1}});
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

// A data folder given as a file, or not there, is named as such.
TEST_F(TaskFiles, ADataFolderThatIsAFileOrMissingIsNamed) {
  write_text(stem("notes.json"), "{}");
  const auto error_of = [](const std::string& dir) {
    try {
      list_eval_splits(dir);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(stem("notes.json")), stem("notes.json") + " is a file, not a data folder");
  EXPECT_EQ(error_of(stem("absent")), stem("absent") + ": no such folder");
}

TEST_F(TaskFiles, MalformedLinesNameFileAndLine) {
  const std::string src = stem("data") + ".src";
  const std::string trg = stem("data") + ".trg";
  EXPECT_EQ(read_error("1 2\n3 x\n", "1\n2\n"), src + ":2: 'x' is not an integer");
  EXPECT_EQ(read_error("1 2\n3 4.5\n", "1\n2\n"), src + ":2: '4.5' is not an integer");
  EXPECT_EQ(read_error("1 2\n3\n", "1\n\n"), trg + ":2: empty line (every sample needs at least one symbol)");
  EXPECT_EQ(read_error("1  2\n", "1\n"), src + ":1: expected integers separated by single spaces");
  EXPECT_EQ(read_error("1 2 \n", "1\n"), src + ":1: expected integers separated by single spaces");
  EXPECT_EQ(read_error("1 2\n3\n", "1\n2\n3\n"), src + ":3: file ends after 2 lines but " + trg + " has 3");
  EXPECT_EQ(read_error("1 2\n3\n", "1\n"), trg + ":2: file ends after 1 lines but " + src + " has 2");
  // A stray carriage return after the last newline is a blank line of the file that holds it.
  EXPECT_EQ(read_error("1 2\n3\n\r", "1\n2\n"),
            src + ":3: an empty last line (a stray carriage return or blank line after the samples); " + trg +
                " has 2 lines");
  EXPECT_EQ(read_error("1 2\n3\n", "1\n10\n"), trg + ":2: symbol 10 is out of range [0, 10)");
  EXPECT_EQ(read_error("-1\n", "1\n"), src + ":1: symbol -1 is out of range [0, 10)");
  EXPECT_EQ(read_error("99999999999999999999\n", "1\n"),
            src + ":1: '99999999999999999999' is not an integer");
  // Bytes a terminal would not show, or that would end the message (a NUL), are written out.
  EXPECT_EQ(read_error(std::string("1 2\x00"
                                   "3\n",
                                   6),
                       "1\n"),
            src + ":1: '2\\x003' is not an integer");
  EXPECT_EQ(read_error("\xef\xbb\xbf"
                       "1 2\n",
                       "1\n"),
            src + ":1: '\\xef\\xbb\\xbf1' is not an integer");
  EXPECT_EQ(read_error("1\t2\n", "1\n"), src + ":1: '1\\x092' is not an integer");
}

TEST_F(TaskFiles, MissingFileIsAUserError) { EXPECT_THROW(read_samples(stem("absent"), 10), UserError); }

TEST_F(TaskFiles, ListsEvalSplitsByLength) {
  for (const std::string name : {"test_1_128", "test_0_64", "test_2_1024", "train"}) {
    write_samples(stem(name), {{{1}, {1}}});
  }
  write_text(stem("test_notes") + ".txt", "not a split\n");
  std::vector<EvalSplit> splits = list_eval_splits(dir_.string());
  ASSERT_EQ(splits.size(), 3u);
  EXPECT_EQ(splits[0].length, 64);
  EXPECT_EQ(splits[0].stem, stem("test_0_64"));
  EXPECT_EQ(splits[1].length, 128);
  EXPECT_EQ(splits[2].length, 1024);
  EXPECT_EQ(eval_split_stem(dir_.string(), 2, 1024), stem("test_2_1024"));
}

// A test_*.src file is meant as a split: a name that does not parse is refused, never skipped.
TEST_F(TaskFiles, EvalSplitWithAMalformedNameIsAUserError) {
  for (const std::string name : {"test_x_5", "test_0_abc", "test_0_0", "test_0_-4", "test_-1_8", "test_0"}) {
    SCOPED_TRACE(name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_samples(stem("test_0_8"), {{{1}, {1}}});
    write_samples(stem(name), {{{1}, {1}}});
    try {
      list_eval_splits(dir_.string());
      ADD_FAILURE() << "accepted";
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find(name + ".src: a test file is named test_{i}_{L}.src"),
                std::string::npos)
          << error.what();
    }
  }
}

TEST_F(TaskFiles, EvalSplitWithoutTargetsIsAUserError) {
  write_text(stem("test_0_64") + ".src", "1\n");
  EXPECT_THROW(list_eval_splits(dir_.string()), UserError);
  EXPECT_THROW(list_eval_splits(stem("absent")), UserError);
}

// Targets without their sources are a split the user meant, not one to skip in silence.
TEST_F(TaskFiles, EvalSplitWithoutSourcesIsAUserError) {
  write_samples(stem("test_0_8"), {{{1}, {1}}});
  write_text(stem("test_1_64") + ".trg", "1\n");
  try {
    list_eval_splits(dir_.string());
    ADD_FAILURE() << "accepted";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()),
              stem("test_1_64") + ".src: missing (" + stem("test_1_64") + ".trg exists)");
  }
}

}  // namespace
}  // namespace lengen
