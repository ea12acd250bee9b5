// Run folders: only a folder lengen made is ever deleted by --force, writes that fail leave no
// temp file, and a damaged log is named, not skipped over.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/run_folder.h"
#include "temp_folder.h"
#include "user_error_message.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class RunFolderTest : public testing::TempFolderTest {
 protected:
  RunFolderTest() : TempFolderTest("lengen_run_folder") {}
};

using testing::user_error_message;

TEST_F(RunFolderTest, OnlyALengenRunFolderIsRemovedForRestart) {
  const fs::path mine = root_ / "mine";
  fs::create_directories(mine);
  RunFolder(mine.string()).mark();
  std::ofstream(mine / "config.json") << "{}";
  EXPECT_TRUE(RunFolder(mine.string()).is_lengen_run());
  RunFolder(mine.string()).remove_for_restart();
  EXPECT_FALSE(fs::exists(mine));

  // Someone's folder, even one holding a config.json.
  const fs::path theirs = root_ / "theirs";
  fs::create_directories(theirs);
  std::ofstream(theirs / "thesis.tex") << "years of work";
  std::ofstream(theirs / "config.json") << "{\"task\": {}, \"model\": {}, \"train\": {}}";
  EXPECT_NE(user_error_message([&] { RunFolder(theirs.string()).remove_for_restart(); }).find("is not a lengen run folder"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(theirs / "thesis.tex"));
  // A file is never a run folder.
  const fs::path file = root_ / "notes.txt";
  std::ofstream(file) << "notes";
  EXPECT_NE(user_error_message([&] { RunFolder(file.string()).remove_for_restart(); }).find("is a file"), std::string::npos);
  EXPECT_TRUE(fs::exists(file));

  // A run folder from before the marker: lengen's resolved config beside its log.
  const fs::path old = root_ / "old";
  fs::create_directories(old);
  std::ofstream(old / "config.json") << "{\"task\": {}, \"model\": {}, \"train\": {}}";
  std::ofstream(old / "log.jsonl") << "{\"step\": 1}\n";
  EXPECT_TRUE(RunFolder(old.string()).is_lengen_run());
}

TEST_F(RunFolderTest, AFailedReplaceLeavesTheTargetAndNoTempFile) {
  // rename() cannot put a file over a non-empty folder: the same failure as an immutable file.
  const fs::path target = root_ / "results.json";
  fs::create_directories(target / "inside");
  const std::string message = user_error_message([&] { write_file_atomically(target.string(), "{}"); });
  EXPECT_EQ(message.rfind("cannot write " + target.string() + ": ", 0), 0u) << message;
  EXPECT_FALSE(fs::exists(target.string() + ".tmp"));
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_NE(user_error_message([&] { write_file_atomically((root_ / "no" / "such" / "dir.json").string(), "{}"); }), "");
}

TEST_F(RunFolderTest, ALogLineWithAStepThatIsNotANumberIsNamed) {
  const std::string log = (root_ / "log.jsonl").string();
  std::ofstream(log) << "{\"step\": 1, \"loss\": 2.0}\n{\"step\": \"x\"}\n";
  EXPECT_EQ(user_error_message([&] { JsonlLog(log, 5); }), log + ":2: \"step\" must be an integer, got \"x\"");
  std::ifstream in(log);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(text, "{\"step\": 1, \"loss\": 2.0}\n{\"step\": \"x\"}\n");
}

}  // namespace
}  // namespace lengen
