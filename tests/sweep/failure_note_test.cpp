// NAME.failure.txt: lengen replaces and removes its own notes only; a note the user annotated is
// kept, below a new failure's note and after the run succeeds.
#include "lengen/failure_note.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

namespace lengen {
namespace {

class FailureNote : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lengen_failure_note_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "a.failure.txt").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string text() const {
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(FailureNote, LengensOwnNoteIsReplacedAndRemoved) {
  write_failure_note(path_, "exit code 1", "first log tail\n");
  EXPECT_EQ(text().rfind("exit code 1\nfirst log tail\n(written by lengen sweep; fingerprint ", 0), 0u)
      << text();
  write_failure_note(path_, "exit code 2", "second");
  EXPECT_EQ(text().find("first log tail"), std::string::npos) << text();
  EXPECT_EQ(text().rfind("exit code 2\nsecond\n", 0), 0u) << text();
  EXPECT_TRUE(remove_failure_note(path_));
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(remove_failure_note(path_));  // none there
}

TEST_F(FailureNote, AnAnnotatedNoteIsKeptBelowTheNextAndAfterSuccess) {
  write_failure_note(path_, "exit code 1", "log tail\n");
  std::ofstream(path_, std::ios::app) << "mine: the disk was full that night\n";
  write_failure_note(path_, "exit code 3", "new tail\n");
  const std::string both = text();
  EXPECT_EQ(both.rfind("exit code 3\nnew tail\n", 0), 0u) << both;  // the report quotes line one
  EXPECT_NE(both.find("mine: the disk was full that night"), std::string::npos) << both;
  EXPECT_NE(both.find("exit code 1\nlog tail\n"), std::string::npos) << both;
  const std::string annotated = both.substr(both.find("exit code 1"));
  // A third failure replaces lengen's second note, not stacking it above the annotated one.
  write_failure_note(path_, "exit code 4", "third tail\n");
  EXPECT_EQ(text().find("exit code 3"), std::string::npos) << text();
  EXPECT_EQ(text().substr(text().find("exit code 1")), annotated) << text();
  // Success: the annotated note is kept as the user left it.
  EXPECT_FALSE(remove_failure_note(path_));
  EXPECT_EQ(text(), annotated);
  EXPECT_FALSE(remove_failure_note(path_));
  EXPECT_EQ(text(), annotated);
  // A note edited in the middle (not appended to) is the user's too.
  fs::remove(path_);
  write_failure_note(path_, "exit code 1", "log tail\n");
  std::string edited = text();
  edited.replace(0, 4, "EXIT");
  std::ofstream(path_, std::ios::trunc) << edited;
  EXPECT_FALSE(remove_failure_note(path_));
  EXPECT_EQ(text(), edited);
}

// A link in the note's place is not lengen's note: never removed, never written through.
TEST_F(FailureNote, ALinkIsNeitherRemovedNorWrittenThrough) {
  const fs::path target = dir_ / "elsewhere.txt";
  std::ofstream(target) << "the user's file\n";
  fs::create_symlink(target, path_);
  EXPECT_FALSE(remove_failure_note(path_));
  write_failure_note(path_, "exit code 1", "tail\n");
  std::ifstream in(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "the user's file\n");
}

}  // namespace
}  // namespace lengen
