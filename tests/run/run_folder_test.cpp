// Run folders: only a folder lengen made is emptied by --force and only of lengen's files, only
// lengen's checkpoint names count, a run has one writer, writes that fail leave no temp file,
// output folders keep the user's files.
#include "lengen/run_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <vector>

#include "lengen/atomic_write.h"
#include "lengen/errors.h"
#include "lengen/folder_lock.h"
#include "lengen/output_files.h"
#include "lengen/run_record.h"
#include "temp_folder.h"
#include "user_error_message.h"

namespace lengen {
namespace {

// Makes `dir` a lengen run folder, as training does first.
void mark_as_run(const std::string& dir) { lengen::write_run_record(dir, {lengen::new_run_id(), nullptr, ""}); }

namespace fs = std::filesystem;

class RunFolderTest : public testing::TempFolderTest {
 protected:
  RunFolderTest() : TempFolderTest("lengen_run_folder") {}
};

using testing::user_error_message;

TEST_F(RunFolderTest, ARunFolderIsEmptiedForRestartAndOnlyItsRecordMakesOne) {
  const fs::path mine = root_ / "mine";
  fs::create_directories(mine);
  mark_as_run(mine.string());
  std::ofstream(mine / "config.json") << "{}";
  EXPECT_TRUE(RunFolder(mine.string()).is_lengen_run());
  RunFolder(mine.string()).remove_for_restart();
  EXPECT_FALSE(fs::exists(mine / "config.json"));

  // Names anyone may use do not make a run folder: only its record does.
  const fs::path lookalike = root_ / "lookalike";
  fs::create_directories(lookalike);
  std::ofstream(lookalike / "config.json") << "{\"task\": \"x\", \"model\": \"y\", \"train\": {}}";
  std::ofstream(lookalike / "log.jsonl") << "";
  std::ofstream(lookalike / "thesis.tex") << "years of work";
  EXPECT_FALSE(RunFolder(lookalike.string()).is_lengen_run());
}

// Even in a folder lengen made, --force deletes only the names lengen writes there.
TEST_F(RunFolderTest, RestartDeletesOnlyTheFilesLengenWrites) {
  const fs::path run = root_ / "run";
  RunFolder folder(run.string());
  fs::create_directories(folder.checkpoint_dir());
  mark_as_run(folder.path());
  for (const std::string name : {"config.json", "log.jsonl", "results.json", "notes.txt", "results.json.123-0.tmp"})
    std::ofstream(run / name) << "x";
  for (const std::string name :
       {"step_00000003.pt", "best.pt", "step_00000006.pt.unreadable", "best.pt.12-3.tmp", "step_00000200_backup.pt", "mine.pt"})
    std::ofstream(run / "checkpoints" / name) << "x";
  folder.remove_for_restart();
  std::set<std::string> left;
  for (const auto& entry : fs::recursive_directory_iterator(run))
    left.insert(fs::relative(entry.path(), run).string());
  EXPECT_EQ(left, (std::set<std::string>{"run.json", "notes.txt", "checkpoints",
                                         "checkpoints/step_00000200_backup.pt", "checkpoints/mine.pt"}));
}

// A checkpoints/ that links out of the run folder is not followed: what it points at is the
// user's, even when its names look like lengen's.
TEST_F(RunFolderTest, RestartDoesNotDeleteThroughALinkedCheckpointFolder) {
  const fs::path elsewhere = root_ / "elsewhere";
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere / "step_00000003.pt") << "someone's model";
  const fs::path run = root_ / "run";
  RunFolder folder(run.string());
  fs::create_directories(run);
  mark_as_run(folder.path());
  std::ofstream(run / "config.json") << "{}";
  fs::create_directory_symlink(elsewhere, folder.checkpoint_dir());
  EXPECT_NE(user_error_message([&] { folder.remove_for_restart(); }).find("is a link"), std::string::npos);
  EXPECT_TRUE(fs::exists(elsewhere / "step_00000003.pt"));
  EXPECT_TRUE(fs::exists(run / "config.json"));  // refused before anything is removed
}

// Only lengen's own checkpoint names count: a user's copy beside them is never resumed from,
// evaluated as "last" or pruned.
TEST_F(RunFolderTest, OnlyLengensCheckpointNamesAreCheckpoints) {
  RunFolder folder((root_ / "run").string());
  fs::create_directories(folder.checkpoint_dir());
  for (const std::string name :
       {"step_00000003.pt", "step_00000006.pt", "step_00000200_backup.pt", "step_old.pt", "step_0000009.pt",
        "step_000000099.pt", "step_00000009.pt.tmp"})
    std::ofstream(folder.checkpoint_dir() + "/" + name) << "x";
  EXPECT_EQ(folder.checkpoints(),
            (std::vector<std::string>{folder.checkpoint_path(3), folder.checkpoint_path(6)}));
  EXPECT_EQ(folder.latest_checkpoint(), folder.checkpoint_path(6));
  EXPECT_EQ(folder.latest_step(), 6);
  folder.prune_checkpoints(1);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(folder.checkpoint_dir())) ++files;
  EXPECT_EQ(files, 6u);
  EXPECT_FALSE(fs::exists(folder.checkpoint_path(3)));
  EXPECT_TRUE(fs::exists(folder.checkpoint_dir() + "/step_00000200_backup.pt"));
}

// A run has one writer: a second lock on it, from this or another process, is refused in one
// line naming the run; the lock is free again once its holder is gone.
TEST_F(RunFolderTest, ARunFolderHasOneWriterAtATime) {
  const std::string run = (root_ / "run").string();
  fs::create_directories(run);
  {
    const FolderLock first(run);
    const std::string message = user_error_message([&] { FolderLock second(run); });
    EXPECT_EQ(message, run + " is in use by another lengen process; wait for it to end");
    EXPECT_TRUE(FolderLock::held_elsewhere(run));
  }
  EXPECT_EQ(user_error_message([&] { FolderLock again(run); }), "");
  EXPECT_FALSE(FolderLock::held_elsewhere(run));
  EXPECT_FALSE(FolderLock::held_elsewhere((root_ / "no_such_run").string()));  // and creates nothing
  EXPECT_FALSE(fs::exists(root_ / "no_such_run"));
  // The lock file is not content: a fresh run may start in a folder that holds only it.
  EXPECT_FALSE(RunFolder(run).has_content());
  // Nor is an empty checkpoints/ beside it (a start that a full disk stopped before its marker).
  fs::create_directories(run + "/checkpoints");
  EXPECT_FALSE(RunFolder(run).has_content());
  std::ofstream(run + "/checkpoints/mine.txt") << "kept";
  EXPECT_TRUE(RunFolder(run).has_content());
}

TEST_F(RunFolderTest, AFailedReplaceLeavesTheTargetAndNoTempFile) {
  // rename() cannot put a file over a non-empty folder: the same failure as an immutable file.
  const fs::path target = root_ / "results.json";
  fs::create_directories(target / "inside");
  const std::string message = user_error_message([&] { write_file_atomically(target.string(), "{}"); });
  EXPECT_EQ(message.rfind("cannot write " + target.string() + ": ", 0), 0u) << message;
  for (const auto& entry : fs::directory_iterator(root_))
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_NE(
      user_error_message([&] { write_file_atomically((root_ / "no" / "such" / "dir.json").string(), "{}"); }),
      "");
  // Two processes replacing one file (sweep shards writing sweep.json) never share a temporary.
  EXPECT_NE(temporary_path_for(target.string()), temporary_path_for(target.string()));
}

// Files in a folder the user names for output: lengen replaces its own, never the user's.
TEST_F(RunFolderTest, OutputFilesReplaceOnlyWhatLengenWrote) {
  const std::string out = (root_ / "out").string();
  fs::create_directories(out);
  std::ofstream(out + "/report.md") << "my report";
  const std::string message = user_error_message([&] { claim_output_files(out, {"a.csv", "report.md"}); });
  EXPECT_NE(message.find(out + "/report.md exists and lengen did not write it"), std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(out + "/" + kOutputListName));  // nothing claimed when one name is refused
  write_output_file(out, "a.csv", "1");
  write_output_file(out, "a.csv", "2");  // its own file, replaced
  std::ifstream mine(out + "/report.md");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(mine), {}), "my report");
  remove_listed_output_files(out);
  EXPECT_FALSE(fs::exists(out + "/a.csv"));
  EXPECT_TRUE(fs::exists(out + "/report.md"));
  EXPECT_FALSE(fs::exists(out + "/" + kOutputListName));
}

}  // namespace
}  // namespace lengen
