// What the CLI writes and deletes: only inside the folder it was given, only files it wrote
// there, one writer per run at a time, and a run resumed or skipped only when it truly is the
// run it claims to be. Each refusal is one line on stderr and exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_folder_test.h"
#include "cli_runner.h"
#include "lengen/folder_lock.h"
#include "lengen/json_file.h"
#include "lengen/run_folder.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::expect_one_line_refusal;
using testing::text_of;

class CliWrites : public testing::CliFolderTest {
 protected:
  CliWrites() : CliFolderTest("lengen_cli_writes") {}
};

// The kept runs under results/ back REPORT.md's tables: the current build reads every one of
// them (older builds' run records included) and reports every run a sweep lists.
TEST_F(CliWrites, EveryKeptResultsFolderReportsAllItsRuns) {
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(LENGEN_SOURCE_DIR) / "results")) {
    if (!entry.is_directory()) continue;
    ++folders;
    const std::string name = entry.path().filename().string();
    const CliResult result = lengen("report " + entry.path().string() + " --out " + at(name));
    ASSERT_EQ(result.code, 0) << name << ": " << result.err;
    const std::string report = text_of(root_ / name / "report.md");
    EXPECT_NE(report.find("## Exact match"), std::string::npos) << name;
    EXPECT_EQ(report.find("Not in the tables"), std::string::npos) << name << ":\n" << report.substr(0, 2000);
  }
  EXPECT_GE(folders, 4);
}

// A path that is not UTF-8 cannot be recorded in config.json or results.json: it is refused
// before any folder is made, not after training as an internal error.
TEST_F(CliWrites, APathThatIsNotUtf8IsRefusedFirst) {
  const std::string run =
      at("u8\xff"
         "dir");
  expect_one_line_refusal(lengen("train " + base() + " --out '" + run + "'"), "is not UTF-8 text");
  EXPECT_FALSE(fs::exists(run));
}

// config.json and log.jsonl are names anyone may use: only lengen's marker lets --force in.
TEST_F(CliWrites, ForceTrustsOnlyTheMarker) {
  const fs::path theirs = root_ / "thesis";
  fs::create_directories(theirs);
  std::ofstream(theirs / "config.json") << R"({"task": "x", "model": "y", "train": {}})";
  std::ofstream(theirs / "log.jsonl") << "";
  std::ofstream(theirs / "thesis.tex") << "years of work";
  expect_one_line_refusal(lengen("train " + base() + " --out " + theirs.string() + " --force"),
                          "not a lengen run folder");
  EXPECT_EQ(text_of(theirs / "thesis.tex"), "years of work");
  // The way out named is another --out, not --resume or --force, which refuse it too.
  expect_one_line_refusal(lengen("train " + base() + " --out " + theirs.string()),
                          "thesis is not a lengen run folder (no run.json) and holds files; lengen trains, "
                          "resumes or --forces only runs it started: choose another --out");

  // In a run folder lengen made, --force still keeps a file of the user's.
  const std::string run = trained("run");
  std::ofstream(fs::path(run) / "notes.txt") << "mine";
  // A name lengen writes beside its files (a stopped writer's temporary file) goes.
  std::ofstream(fs::path(run) / "results.json.999-1.tmp") << "half written";
  const CliResult forced = lengen("train " + base() + " --out " + run + " --force");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(text_of(fs::path(run) / "notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(fs::path(run) / "results.json.999-1.tmp"));
}

// A second writer of a run (an evaluation, a resume) is refused while the first holds it.
TEST_F(CliWrites, ARunHasOneWriterAtATime) {
  const std::string run = trained("run");
  const std::string results = text_of(fs::path(run) / "results.json");
  {
    const FolderLock held(run);
    expect_one_line_refusal(lengen("eval " + run + " --lengths 3"),
                            run + " is in use by another lengen process");
    expect_one_line_refusal(lengen("train " + base() + " --out " + run + " --resume --set train.steps=9"),
                            run + " is in use by another lengen process");
    expect_one_line_refusal(lengen("train " + base() + " --out " + run + " --force"), run + " is in use");
    // A resume the run has outgrown meanwhile is named as in use, not as too short.
    expect_one_line_refusal(
        lengen("train " + base() + " --out " + run + " --resume --set train.steps=2 --set train.warmup=0"),
        run + " is in use by another lengen process");
    // Nor do a report or attention maps go into a run folder another process is writing.
    expect_one_line_refusal(lengen("report " + run), "in use by another lengen process");
    expect_one_line_refusal(lengen("report " + run + " --out " + run), "in use by another lengen process");
    EXPECT_FALSE(fs::exists(fs::path(run) / "report.md"));
    EXPECT_EQ(text_of(fs::path(run) / "results.json"), results);
  }
  EXPECT_EQ(lengen("report " + run).code, 0);
  const CliResult free = lengen("eval " + run + " --lengths 3");
  EXPECT_EQ(free.code, 0) << free.err;
}

// A user's file whose name merely starts like a checkpoint is never resumed from, evaluated as
// "last" or pruned.
TEST_F(CliWrites, OnlyLengensCheckpointNamesAreCheckpoints) {
  const std::string run = trained("run");
  const fs::path checkpoints = fs::path(run) / "checkpoints";
  fs::copy_file(checkpoints / "step_00000003.pt", checkpoints / "step_00000200_backup.pt");
  std::ofstream(checkpoints / "step_old.pt") << "not a checkpoint";
  const CliResult resumed = lengen("train " + base() + " --out " + run + " --resume --set train.steps=12");
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE((resumed.out + resumed.err).find("from step 6"), std::string::npos) << resumed.out << resumed.err;
  EXPECT_TRUE(fs::exists(checkpoints / "step_00000200_backup.pt"));
  EXPECT_TRUE(fs::exists(checkpoints / "step_old.pt"));
  const CliResult evaluated = lengen("eval " + run + " --checkpoint last --lengths 3");
  EXPECT_EQ(evaluated.code, 0) << evaluated.err;
  EXPECT_NE(evaluated.out.find("step_00000012.pt (step 12)"), std::string::npos) << evaluated.out;
}

// One result per length: another checkpoint's, or one over other samples, replaces the stored one, and
// says so.
TEST_F(CliWrites, AnotherCheckpointsResultReplacesTheStoredOneAndSaysSo) {
  const std::string run = trained("run");
  const CliResult result =
      lengen("eval " + run + " --checkpoint " + run + "/checkpoints/step_00000003.pt --lengths 4");
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE((result.out + result.err).find("length 4: the result of step 6 over"), std::string::npos)
      << result.out << result.err;
  const nlohmann::json results = read_json_file((fs::path(run) / "results.json").string());
  EXPECT_EQ(results["results"]["teacher_forced"]["4"]["step"], 3);
  // A quick look on fewer samples replaces the figure too: said, not silent.
  const CliResult fewer = lengen("eval " + run + " --checkpoint " + run +
                                 "/checkpoints/step_00000003.pt --lengths 4 --samples 2");
  ASSERT_EQ(fewer.code, 0) << fewer.err;
  EXPECT_NE((fewer.out + fewer.err)
                .find("length 4: the result of step 3 over 4 samples is replaced by step 3 over 2"),
            std::string::npos)
      << fewer.out << fewer.err;
}

// An empty path is the root or the current folder to the code that takes it: refused as a value.
TEST_F(CliWrites, EmptyPathsAreRefused) {
  const std::string run = trained("run");
  for (const std::string& args : std::vector<std::string>{
           "train " + base() + " --out ''", "train " + base() + " --out " + at("other") + " --data ''",
           "eval ''", "eval " + run + " --data ''", "report ''", "report " + run + " --out ''",
           "attention " + run + " --length 4 --out ''", "data --task copy --out ''",
           "sweep " + base() + " --out ''",
           "train " + base() + " --out " + at("other") + " --set eval.lengths=",
           "train " + base() + " --out " + at("other") + " --set description="}) {
    SCOPED_TRACE(args);
    const CliResult result = lengen(args);
    EXPECT_EQ(result.code, 2) << result.err;
    EXPECT_EQ(result.err_lines(), 1) << result.err;
  }
  EXPECT_FALSE(fs::exists(at("other")));
  EXPECT_FALSE(fs::exists("/config.json"));
  // Named as empty, not as a path that does not exist; an option given twice, as given twice.
  expect_one_line_refusal(lengen("eval ''"), "run: the path is empty");
  expect_one_line_refusal(lengen("report " + run + " --out " + at("a") + " --out " + at("b")),
                          "--out: given 2 times; give it once");
}

// One report or attention page at a time in an output folder, and a new one leaves none of an
// earlier one's pages beside its own (a layer the new runs do not have); files of others stay.
TEST_F(CliWrites, AReportReplacesAnEarlierReportWhole) {
  const std::string deep = trained("deep", " --set model.layers=2");
  const std::string shallow = trained("shallow", " --set model.layers=1 --set train.seed=2");
  ASSERT_EQ(lengen("report " + deep + " --out " + at("pages")).code, 0);
  ASSERT_EQ(lengen("attention " + deep + " --length 4 --out " + at("pages")).code, 0);
  ASSERT_TRUE(fs::exists(root_ / "pages" / "attention_on_target_layer1_best.csv"));
  ASSERT_TRUE(fs::exists(root_ / "pages" / "deep" / "layer1_head0.dat"));
  std::ofstream(root_ / "pages" / "notes.txt") << "mine";
  ASSERT_EQ(lengen("report " + shallow + " --out " + at("pages")).code, 0);
  EXPECT_TRUE(fs::exists(root_ / "pages" / "attention_on_target_layer0_best.csv"));
  EXPECT_FALSE(fs::exists(root_ / "pages" / "attention_on_target_layer1_best.csv"));
  EXPECT_TRUE(fs::exists(root_ / "pages" / "deep" / "layer1_head0.dat"));  // the attention page's
  ASSERT_EQ(lengen("attention " + shallow + " --length 4 --out " + at("pages")).code, 0);
  EXPECT_FALSE(fs::exists(root_ / "pages" / "deep"));
  EXPECT_TRUE(fs::exists(root_ / "pages" / "shallow" / "layer0_head0.dat"));
  EXPECT_TRUE(fs::exists(root_ / "pages" / "report.md"));  // the report's
  EXPECT_EQ(text_of(root_ / "pages" / "notes.txt"), "mine");
  // While another process writes into the folder, a report is refused in one line.
  const std::string report = text_of(root_ / "pages" / "report.md");
  expect_one_line_refusal(
      lengen("report " + deep + " --out " + at("pages"), "flock -o " + at("pages/.lengen_lock")),
      at("pages") + " is in use by another lengen process");
  EXPECT_EQ(text_of(root_ / "pages" / "report.md"), report);
}

// A page lengen wrote is lengen's, edited or not: the next report replaces it. A page of the
// user's under a name a report may write (a layer's table) stops the report before the earlier
// report's files are removed.
TEST_F(CliWrites, AReportChecksEveryPageBeforeRemovingAny) {
  const std::string run = trained("run");
  ASSERT_EQ(lengen("report " + run + " --out " + at("pages")).code, 0);
  const std::string report = text_of(root_ / "pages" / "report.md");
  std::ofstream(root_ / "pages" / "report.md", std::ios::app) << "my line\n";
  ASSERT_EQ(lengen("report " + run + " --out " + at("pages")).code, 0);
  EXPECT_EQ(text_of(root_ / "pages" / "report.md"), report);
  std::ofstream(root_ / "pages" / "attention_on_target_layer7_best.csv") << "my table\n";
  expect_one_line_refusal(lengen("report " + run + " --out " + at("pages")),
                          "attention_on_target_layer7_best.csv exists and lengen did not write it");
  EXPECT_EQ(text_of(root_ / "pages" / "report.md"), report);
  EXPECT_TRUE(fs::exists(root_ / "pages" / "exact_match.csv"));
  // Results of best.pt are said to be.
  ASSERT_EQ(lengen("eval " + run + " --checkpoint best").code, 0);
  ASSERT_EQ(lengen("report " + run).code, 0);
  EXPECT_NE(text_of(root_ / "run" / "report.md").find("models: each run's best.pt"), std::string::npos);
}

// A report or page refused (the folder held by another writer, a file of the user's under its
// name) lists nothing: a file the user puts under one of its names later stays theirs.
TEST_F(CliWrites, ARefusedPageListsNothing) {
  const std::string run = trained("run");
  fs::create_directories(root_ / "held");
  expect_one_line_refusal(
      lengen("report " + run + " --out " + at("held"), "flock -o " + at("held/.lengen_lock")),
      "is in use by another lengen process");
  std::ofstream(root_ / "held" / "report.md") << "my notes";
  expect_one_line_refusal(lengen("report " + run + " --out " + at("held")), "lengen did not write it");
  EXPECT_EQ(text_of(root_ / "held" / "report.md"), "my notes");

  fs::create_directories(root_ / "maps");
  std::ofstream(root_ / "maps" / "attention.md") << "my page";
  expect_one_line_refusal(lengen("attention " + run + " --length 4 --out " + at("maps")),
                          "lengen did not write it");
  EXPECT_EQ(text_of(root_ / "maps" / "attention.md"), "my page");
}

// A start that failed before its first checkpoint leaves a run folder with nothing to resume:
// a new start says to use --force, not --resume.
TEST_F(CliWrites, AFailedStartIsNamedAsSuch) {
  const std::string run = trained("run");
  for (const std::string& checkpoint : RunFolder(run).checkpoints()) fs::remove(checkpoint);
  // Evaluated and kept without its checkpoints (as under results/), it is no failed start.
  expect_one_line_refusal(lengen("train " + base() + " --out " + run), "already exists; use --resume");
  fs::remove(RunFolder(run).results_path());
  expect_one_line_refusal(lengen("train " + base() + " --out " + run),
                          "was started but holds no checkpoint (a start that failed); use --force");
  // A --resume of it says the same way out.
  expect_one_line_refusal(lengen("train " + base() + " --out " + run + " --resume"),
                          "it has no checkpoint yet (--force starts it over)");
  EXPECT_EQ(lengen("train " + base() + " --out " + run + " --force").code, 0);
}

// report and attention replace the files they wrote in --out, never a user's file there.
TEST_F(CliWrites, ReportAndAttentionReplaceOnlyTheirOwnFiles) {
  const std::string run = trained("run");
  fs::create_directories(root_ / "out");
  std::ofstream(root_ / "out" / "report.md") << "my report";
  std::ofstream(root_ / "out" / "exact_match.csv") << "my table";
  expect_one_line_refusal(lengen("report " + run + " --out " + at("out")), "lengen did not write it");
  EXPECT_EQ(text_of(root_ / "out" / "report.md"), "my report");
  EXPECT_EQ(text_of(root_ / "out" / "exact_match.csv"), "my table");
  fs::remove(root_ / "out" / "report.md");
  fs::remove(root_ / "out" / "exact_match.csv");
  EXPECT_EQ(lengen("report " + run + " --out " + at("out")).code, 0);
  EXPECT_EQ(lengen("report " + run + " --out " + at("out")).code, 0);  // its own files
  std::ofstream(root_ / "afile") << "mine";
  expect_one_line_refusal(lengen("report " + run + " --out " + at("afile")), "is a file, not a folder");
  EXPECT_EQ(text_of(root_ / "afile"), "mine");

  fs::create_directories(root_ / "maps" / "run");
  std::ofstream(root_ / "maps" / "run" / "layer0_head1.dat") << "my data";
  expect_one_line_refusal(lengen("attention " + run + " --length 4 --out " + at("maps")),
                          "lengen did not write it");
  EXPECT_EQ(text_of(root_ / "maps" / "run" / "layer0_head1.dat"), "my data");
}

// --force removes the report and attention pages of the run it starts over, and keeps the user's files.
TEST_F(CliWrites, ForceRemovesTheRunsPagesAndKeepsTheUsersFiles) {
  const std::string one = trained("one");
  ASSERT_EQ(lengen("report " + one).code, 0);
  ASSERT_EQ(lengen("attention " + one + " --length 4 --out " + one).code, 0);
  ASSERT_TRUE(fs::exists(fs::path(one) / "report.md"));
  ASSERT_TRUE(fs::exists(fs::path(one) / "one" / "layer0_head0.dat"));
  std::ofstream(fs::path(one) / "notes.txt") << "mine";
  ASSERT_EQ(lengen("train " + base() + " --out " + one + " --force").code, 0);
  EXPECT_FALSE(fs::exists(fs::path(one) / "report.md"));
  EXPECT_FALSE(fs::exists(fs::path(one) / "attention.md"));
  EXPECT_FALSE(fs::exists(fs::path(one) / "one"));
  EXPECT_EQ(text_of(fs::path(one) / "notes.txt"), "mine");
}

// Run folders named "..", or sharing a name, each get their own folder inside --out.
TEST_F(CliWrites, AttentionWritesEachRunIntoItsOwnFolderInOut) {
  const std::string run = trained("run");
  const CliResult result =
      lengen("attention .. --length 4 --out " + at("maps"), "cd " + run + "/checkpoints &&");
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(fs::exists(root_ / "maps" / "run" / "layer0_head0.dat"));
  // A length out of range is named as the option typed.
  const CliResult too_long = lengen("attention " + run + " --length 2000000 --out " + at("maps"));
  expect_one_line_refusal(too_long, "--length 2000000");
  EXPECT_EQ(too_long.err.find("--set"), std::string::npos) << too_long.err;
  for (const auto& entry : fs::recursive_directory_iterator(run))
    EXPECT_EQ(entry.path().filename().string().rfind("layer", 0), std::string::npos) << entry.path();

  for (const std::string copy : {"p/x_3", "q/x", "r/x"}) {
    fs::create_directories(root_ / copy);
    fs::copy(run, root_ / copy, fs::copy_options::recursive);
  }
  const CliResult three = lengen("attention " + at("p/x_3") + " " + at("q/x") + " " + at("r/x") +
                                 " --length 4 --out " + at("three"));
  EXPECT_EQ(three.code, 0) << three.err;
  for (const std::string name : {"x_3", "x", "x_2"}) {
    EXPECT_NE(text_of(root_ / "three" / name / "layer0_head0.dat").find("run " + name + ","),
              std::string::npos)
        << name;
  }
}

// Runs of two tasks that read the same source (copy, sort) answer it otherwise: the page says
// their samples differ. A name with '|' or a space stays one table cell and one image link.
TEST_F(CliWrites, AttentionPagesNameOtherTasksAndKeepOddNamesInTheirCells) {
  const std::string copy = at("a|b c");
  fs::rename(trained("plain"), copy);
  const std::string sort = trained("sorted", " --set task.name=sort");
  const CliResult page = lengen("attention '" + copy + "' " + sort + " --length 4 --out " + at("maps"));
  ASSERT_EQ(page.code, 0) << page.err;
  const std::string md = text_of(root_ / "maps" / "attention.md");
  EXPECT_NE(md.find("The runs' samples differ"), std::string::npos) << md;
  EXPECT_NE(md.find("![](<a\\|b c/layer0_head0.png>)"), std::string::npos) << md;
  EXPECT_NE(md.find("| a\\|b c: "), std::string::npos) << md;
}

// A checkpoint carries the model section it was trained with: one of another method is refused
// by eval and attention even loose, renamed or linked, where its tensors alone would fit.
TEST_F(CliWrites, ACheckpointOfAnotherMethodIsRefusedWhereverItLies) {
  const std::string softmax = trained("softmax");
  ASSERT_EQ(
      lengen("train " + base() + " --set model.attention.normalizer=entmax15 --out " + at("entmax")).code, 0);
  const fs::path theirs = fs::path(at("entmax")) / "checkpoints";
  fs::path last;
  for (const auto& entry : fs::directory_iterator(theirs))
    if (entry.path().filename().string().rfind("step_", 0) == 0 && entry.path() > last) last = entry.path();
  ASSERT_FALSE(last.empty());
  fs::copy_file(last, root_ / "loose.pt");
  fs::create_symlink(last, root_ / "linked.pt");
  for (const std::string checkpoint : {"loose.pt", "linked.pt"}) {
    expect_one_line_refusal(lengen("eval " + softmax + " --checkpoint " + at(checkpoint) + " --lengths 4"),
                            "model.attention.normalizer");
    expect_one_line_refusal(lengen("attention " + softmax + " --checkpoint " + at(checkpoint) +
                                   " --length 4 --out " + at("maps")),
                            "model.attention.normalizer");
  }
  // Renamed into the run as one of its own checkpoints.
  fs::copy_file(last, fs::path(softmax) / "checkpoints" / "step_99999999.pt");
  expect_one_line_refusal(lengen("eval " + softmax + " --lengths 4"), "model.attention.normalizer");
}

// Evaluation multiples count from task.len_max: training files with longer sources are refused
// (file and line named) before a run folder is made.
TEST_F(CliWrites, TrainingFilesLongerThanTheConfiguredLengthAreRefused) {
  ASSERT_EQ(
      lengen("data --task copy --param vocab=4 --len-min 2 --len-max 8 --train 64 --out " + at("long")).code,
      0);
  const CliResult result = lengen("train " + base() + " --out " + at("run") + " --data " + at("long"));
  expect_one_line_refusal(result, "of a source at task.len_max=4");
  EXPECT_NE(result.err.find("train.src:"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(root_ / "run"));
  EXPECT_EQ(
      lengen("train " + base() + " --set task.len_max=8 --out " + at("run") + " --data " + at("long")).code,
      0);
  // A folder without training files is named as the option, not as a file that cannot be read.
  fs::create_directories(root_ / "empty");
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("run2") + " --data " + at("empty")),
                          "--data " + at("empty") + " has no train.src/.trg");
  EXPECT_FALSE(fs::exists(root_ / "run2"));
}

// The run records task.len_min..task.len_max as the lengths it trained on, and evaluation multiples
// count from task.len_max: files lengen drew must have been drawn at exactly those lengths (their
// data.json says so), and other files must reach both ends.
TEST_F(CliWrites, TrainingFilesMustSpanTheConfiguredLengths) {
  const std::string short_data = "--len-min 2 --len-max 3 --train 64 --eval-lengths 6 --eval-size 2 --out ";
  ASSERT_EQ(lengen("data --task copy --param vocab=4 " + short_data + at("short")).code, 0);
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("run") + " --data " + at("short")),
                          "holds training data drawn at task lengths 2..3 (" + at("short") +
                              "/data.json), but the config has task.len_min=2, task.len_max=4; set them to 2 "
                              "and 3");
  EXPECT_FALSE(fs::exists(root_ / "run"));
  expect_one_line_refusal(lengen("train " + base() + " --set task.len_min=1 --set task.len_max=3 --out " +
                                 at("run") + " --data " + at("short")),
                          "drawn at task lengths 2..3");
  const CliResult matching =
      lengen("train " + base() + " --set task.len_max=3 --out " + at("run") + " --data " + at("short"));
  EXPECT_EQ(matching.code, 0) << matching.err;
  // Files from another tool (no record) must hold a source at each end of the configured range.
  fs::create_directories(root_ / "hand");
  std::ofstream(at("hand") + "/train.src") << "1 2\n1 2 3\n";
  std::ofstream(at("hand") + "/train.trg") << "1 2\n1 2 3\n";
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + at("run2") + " --data " + at("hand")),
      "train.src: the longest source (line 2) has 3 symbols, fewer than the 4 of a source "
      "at task.len_max=4");
  expect_one_line_refusal(
      lengen("train " + base() + " --set task.len_min=1 --set task.len_max=3 --out " + at("run2") +
             " --data " + at("hand")),
      "train.src: the shortest source (line 1) has 2 symbols, more than the 1 of a source "
      "at task.len_min=1");
  EXPECT_FALSE(fs::exists(root_ / "run2"));
  const CliResult spanning =
      lengen("train " + base() + " --set task.len_max=3 --out " + at("run2") + " --data " + at("hand"));
  EXPECT_EQ(spanning.code, 0) << spanning.err;
}

// A target longer than greedy decoding produces for its source could never be scored, and a huge
// one would hold training on one step for hours: it is refused, file and line named.
TEST_F(CliWrites, TrainingTargetsLongerThanDecodingProducesAreRefused) {
  fs::create_directories(root_ / "huge");
  std::ofstream(at("huge") + "/train.src") << "1 2 3\n1 2 3\n";
  std::string long_target = "1";
  for (int i = 0; i < 5000; ++i) long_target += " 2";
  std::ofstream(at("huge") + "/train.trg") << "1 2 3\n" << long_target << "\n";
  const CliResult result = lengen("train " + base() + " --set task.len_min=3 --set task.len_max=3 --out " +
                                  at("run") + " --data " + at("huge"));
  expect_one_line_refusal(result, "train.trg:2: a target of 5001 symbols after a source of 3");
  EXPECT_NE(result.err.find("eval.decode_cap=2.2"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(root_ / "run"));
}

// Training data given with --data is recorded (absolute path and hash); a resume on other data
// or on none is refused before anything is written.
TEST_F(CliWrites, AResumeTrainsOnTheRunsOwnData) {
  ASSERT_EQ(
      lengen("data --task copy --param vocab=4 --len-min 2 --len-max 4 --train 64 --out " + at("data")).code,
      0);
  ASSERT_EQ(lengen("data --task copy --param vocab=4 --len-min 2 --len-max 4 --train 64 --seed 5 --out " +
                   at("other"))
                .code,
            0);
  const CliResult trained_on_files =
      lengen("train " + base() + " --out " + at("run") + " --data " + at("data"));
  ASSERT_EQ(trained_on_files.code, 0) << trained_on_files.err;
  EXPECT_NE(text_of(root_ / "run" / "run.json").find(fs::absolute(at("data")).string()), std::string::npos);
  const std::string log = text_of(root_ / "run" / "log.jsonl");
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("run") + " --resume --set train.steps=9"),
                          "it was trained on --data " + at("data") + " (files with hash ");
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("run") +
                                 " --resume --set train.steps=9 --data " + at("other")),
                          "it was trained on --data " + at("data"));
  EXPECT_EQ(text_of(root_ / "run" / "log.jsonl"), log);
  // The same folder with other contents is other data.
  const std::string record_hash = read_json_file(at("run/run.json"))["training_data"]["hash"];
  fs::copy_file(at("data/train.src"), at("data/train.src.kept"));
  std::ofstream(at("data/train.src"), std::ios::app) << "1 2\n";
  std::ofstream(at("data/train.trg"), std::ios::app) << "1 2\n";
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("run") +
                                 " --resume --set train.steps=9 --data " + at("data")),
                          "(files with hash " + record_hash + "), not on --data " +
                              fs::weakly_canonical(at("data")).string() + " (files with hash ");
  fs::remove(at("data/train.src"));
  fs::rename(at("data/train.src.kept"), at("data/train.src"));
  std::string targets = text_of(at("data/train.trg"));
  targets.resize(targets.size() - 4);
  std::ofstream(at("data/train.trg"), std::ios::trunc) << targets;
  const CliResult same = lengen("train " + base() + " --out " + at("run") +
                                " --resume --set train.steps=9 --data " + at("data"));
  EXPECT_EQ(same.code, 0) << same.err;
  // The same files moved to another folder: the record follows them.
  fs::rename(at("data"), at("moved"));
  const CliResult moved = lengen("train " + base() + " --out " + at("run") +
                                 " --resume --set train.steps=12 --data " + at("moved"));
  EXPECT_EQ(moved.code, 0) << moved.err;
  const nlohmann::json record = read_json_file(at("run/run.json"))["training_data"];
  EXPECT_EQ(record.value("dir", ""), fs::weakly_canonical(at("moved")).string());
}

// A run started short of its config's train.steps (its schedule scaled down) resumes to more
// steps with the schedule it started with, not one scaled anew.
TEST_F(CliWrites, AShortRunResumesToMoreStepsWithItsSchedule) {
  std::string long_config = testing::tiny_copy_json(60);
  for (const std::string key : {"\"warmup\": 2", "\"eval_every\": 3", "\"checkpoint_every\": 3"})
    long_config.replace(long_config.find(key), key.size(), key.substr(0, key.size() - 1) + "30");
  std::ofstream(at("long.json")) << long_config;
  const CliResult started =
      lengen("train " + at("long.json") + " --out " + at("run") + " --set train.steps=20");
  ASSERT_EQ(started.code, 0) << started.err;
  EXPECT_NE(started.out.find("scaled train.warmup 30 -> 10"), std::string::npos) << started.out;
  const CliResult resumed =
      lengen("train " + at("long.json") + " --out " + at("run") + " --resume --set train.steps=40");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const nlohmann::json config = read_json_file(at("run/config.json"));
  EXPECT_EQ(config["train"]["steps"], 40);
  EXPECT_EQ(config["train"]["warmup"], 10);
  EXPECT_EQ(config["train"]["checkpoint_every"], 2);
}

// A finished short run resumed without its --set train.steps keeps its config.json's steps: nothing
// trains on to the config file's, no checkpoint is pruned.
TEST_F(CliWrites, AResumeWithoutTrainStepsKeepsTheRunsSteps) {
  std::ofstream(at("long.json")) << testing::tiny_copy_json(60);
  ASSERT_EQ(lengen("train " + at("long.json") + " --out " + at("run") + " --set train.steps=6").code, 0);
  const std::string results = text_of(at("run/results.json"));
  const CliResult resumed = lengen("train " + at("long.json") + " --out " + at("run") + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE((resumed.out + resumed.err).find("to its config.json's 6 steps (--set train.steps=60 for"),
            std::string::npos)
      << resumed.out << resumed.err;
  EXPECT_EQ(read_json_file(at("run/config.json"))["train"]["steps"], 6);
  EXPECT_TRUE(fs::exists(root_ / "run" / "checkpoints" / "step_00000006.pt"));
  EXPECT_FALSE(fs::exists(root_ / "run" / "checkpoints" / "step_00000009.pt"));
  EXPECT_EQ(read_json_file(at("run/results.json"))["results"], nlohmann::json::parse(results)["results"]);
}

// A run stopped early resumed to fewer steps than the warmup it keeps is refused: its config.json
// would hold a schedule no command reads.
TEST_F(CliWrites, AResumeToFewerStepsThanTheWarmupIsRefused) {
  std::string config = testing::tiny_copy_json(12);
  config.replace(config.find("\"warmup\": 2"), 11, "\"warmup\": 10");
  std::ofstream(at("long.json")) << config;
  ASSERT_EQ(lengen("train " + at("long.json") + " --out " + at("run")).code, 0);
  for (const char* late : {"step_00000006.pt", "step_00000009.pt", "step_00000012.pt"})
    fs::remove(root_ / "run" / "checkpoints" / late);  // as if stopped at step 3
  const std::string written = text_of(at("run/config.json"));
  expect_one_line_refusal(
      lengen("train " + at("long.json") + " --out " + at("run") + " --resume --set train.steps=5"),
      "with its config.json's schedule: train.warmup (10) must be <= train.steps (5)");
  EXPECT_EQ(text_of(at("run/config.json")), written);
}

// A resume may lengthen a run, not shorten it below its newest checkpoint.
TEST_F(CliWrites, AResumeCannotShortenARun) {
  const std::string run = trained("run");
  const std::string config = text_of(fs::path(run) / "config.json");
  expect_one_line_refusal(lengen("train " + base() + " --out " + run + " --resume --set train.steps=3"),
                          "it has trained 6 steps already");
  EXPECT_EQ(text_of(fs::path(run) / "config.json"), config);
}

// A resume with no checkpoint it can read fails as it was: config.json keeps its train.steps.
TEST_F(CliWrites, AFailedResumeLeavesTheConfigAsItWas) {
  const std::string run = trained("run");
  const std::string config = text_of(fs::path(run) / "config.json");
  for (const auto& entry : fs::directory_iterator(fs::path(run) / "checkpoints")) {
    if (entry.path().extension() == ".pt") fs::resize_file(entry.path(), 10);
  }
  const CliResult result = lengen("train " + base() + " --out " + run + " --resume --set train.steps=12");
  EXPECT_EQ(result.code, 2) << result.out << result.err;
  EXPECT_EQ(text_of(fs::path(run) / "config.json"), config);
}

// Finished means trained to train.steps: a run interrupted and then evaluated is resumed by the
// sweep, not skipped.
TEST_F(CliWrites, ASweepResumesAnEvaluatedButUnfinishedRun) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  fs::remove(root_ / "out" / "a" / "checkpoints" / "step_00000006.pt");  // as if stopped at step 3
  ASSERT_TRUE(fs::exists(root_ / "out" / "a" / "results.json"));
  const CliResult again = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("start a"), std::string::npos) << again.out;
  EXPECT_TRUE(fs::exists(root_ / "out" / "a" / "checkpoints" / "step_00000006.pt"));
  const CliResult third = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  EXPECT_NE(third.out.find("skip a (finished)"), std::string::npos) << third.out;
}

// A sweep file of the user's named sweep.json in the --out folder (the name of the sweep's own
// record) stops the sweep before it writes anything.
TEST_F(CliWrites, ASweepLeavesTheUsersSweepFileInItsFolderAlone) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  fs::create_directories(root_ / "out");
  std::ofstream(root_ / "out" / "sweep.json") << R"({"mine": 1})";
  expect_one_line_refusal(lengen("sweep " + at("sweep.json") + " --out " + at("out")),
                          "is not a lengen sweep manifest");
  EXPECT_EQ(text_of(root_ / "out" / "sweep.json"), R"({"mine": 1})");
}

// Two sweep files on one folder: the second adds its runs to the manifest and keeps the first's,
// whose side files stay its own (a rerun of the first sweep is not refused).
TEST_F(CliWrites, ASecondSweepFileKeepsTheFirstsRunsInTheManifest) {
  std::ofstream(at("first.json"))
      << R"({"base": "base.json", "description": "baseline", "list": [{"name": "a"}]})";
  std::ofstream(at("second.json"))
      << R"({"base": "base.json", "description": "trial", "list": [{"name": "b"}]})";
  ASSERT_EQ(lengen("sweep " + at("first.json") + " --out " + at("out")).code, 0);
  // The first sweep file's description is kept.
  ASSERT_EQ(lengen("sweep " + at("second.json") + " --out " + at("out")).code, 0);
  const std::string manifest = text_of(root_ / "out" / "sweep.json");
  EXPECT_NE(manifest.find("\"a\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"b\""), std::string::npos) << manifest;
  const nlohmann::json merged = read_json_file(at("out/sweep.json"));
  EXPECT_EQ(merged.value("description", ""), "baseline; trial");
  // A description already there is not added again.
  std::ofstream(at("third.json"))
      << R"({"base": "base.json", "description": "base", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("first.json") + " --out " + at("out")).code, 0);
  ASSERT_EQ(lengen("sweep " + at("third.json") + " --out " + at("out")).code, 0);
  const nlohmann::json rerun = read_json_file(at("out/sweep.json"));
  EXPECT_EQ(rerun.value("description", ""), "baseline; trial; base");
  ASSERT_EQ(lengen("report " + at("out")).code, 0);
  EXPECT_NE(text_of(root_ / "out" / "report.md").find("Sweep: baseline; trial; base\n"), std::string::npos);
  const CliResult again = lengen("sweep " + at("first.json") + " --out " + at("out"));
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("skip a (finished)"), std::string::npos) << again.out;
}

// Bad input is one line and exit 2, with nothing written.
TEST_F(CliWrites, ASweepWithAnInvalidRunIsOneLine) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "grid": {"model.bogus": [1, 2]}})";
  const CliResult result = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  expect_one_line_refusal(result, "sweep run bogus1: ");
  EXPECT_NE(result.err.find("model.bogus"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(at("out")));
}

// A run another process holds (a second sweep on the same folder) is skipped as in use, not
// failed, and its log is not touched.
TEST_F(CliWrites, ASecondSweepSkipsARunInUse) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  fs::remove(root_ / "out" / "a" / "checkpoints" / "step_00000006.pt");  // unfinished again
  const std::string log = text_of(root_ / "out" / "a.log");
  // Hold the run's lock from another process (flock(1)), as a running training holds it.
  const CliResult busy =
      lengen("sweep " + at("sweep.json") + " --out " + at("out"), "flock -o " + at("out/a/.lengen_lock"));
  EXPECT_EQ(busy.code, 0) << busy.out << busy.err;
  EXPECT_NE(busy.out.find("skip a (in use by another lengen process)"), std::string::npos) << busy.out;
  EXPECT_FALSE(fs::exists(root_ / "out" / "a.failure.txt"));
  EXPECT_EQ(text_of(root_ / "out" / "a.log"), log);
  // Its dry run says so, not "resume".
  const CliResult plan = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run",
                                "flock -o " + at("out/a/.lengen_lock"));
  EXPECT_NE(plan.out.find("a  [in use by another lengen process; the sweep skips it]"), std::string::npos)
      << plan.out;
}

// A second sweep file naming a run that another one started with another config does not resume
// it as its own: the run's resume refuses, and the sweep records the failure; a run in use is skipped.
TEST_F(CliWrites, ASweepDoesNotResumeARunStartedUnderAnotherConfig) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  fs::remove(root_ / "out" / "a" / "results.json");  // started, not finished
  std::ofstream(at("other.json")) << R"({"base": "base.json", "list": [{"name": "a", "train.lr": 0.002}]})";
  const std::string config = text_of(root_ / "out" / "a" / "config.json");
  const CliResult busy =
      lengen("sweep " + at("other.json") + " --out " + at("out"), "flock -o " + at("out/a/.lengen_lock"));
  EXPECT_NE(busy.out.find("skip a (in use by another lengen process)"), std::string::npos) << busy.out;
  EXPECT_EQ(lengen("sweep " + at("other.json") + " --out " + at("out")).code, 1);
  EXPECT_NE(text_of(root_ / "out" / "a.failure.txt").find("train.lr"), std::string::npos);
  EXPECT_EQ(text_of(root_ / "out" / "a" / "config.json"), config);
  EXPECT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
}

// A run evaluated only on --data files has no row among the results on generated data: it is
// named as left out, not shown as a row of "-" under an empty label.
TEST_F(CliWrites, AReportNamesARunEvaluatedOnTheOtherDataOnly) {
  ASSERT_EQ(lengen("data --task copy --param vocab=4 --len-min 2 --len-max 4 --train 64 --eval-lengths 4 "
                   "--eval-size 4 --out " +
                   at("files"))
                .code,
            0);
  fs::create_directories(root_ / "runs");
  ASSERT_EQ(lengen("train " + base() + " --out " + at("runs/generated")).code, 0);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("runs/on_files") + " --data " + at("files")).code, 0);
  ASSERT_EQ(lengen("report " + at("runs") + " --out " + at("report")).code, 0);
  const std::string report = text_of(root_ / "report" / "report.md");
  EXPECT_NE(report.find("on_files (results on --data files only: lengen report --on-files)"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("checkpoint=,"), std::string::npos) << report;
  const CliResult files_only = lengen("report " + at("runs/on_files") + " --out " + at("report2"));
  expect_one_line_refusal(files_only, "holds no run evaluated on generated data");
}

// Shards of two sweep files on one folder: sweep.json describes every run, so a second file whose
// runs of another shard were trained under other settings is refused.
TEST_F(CliWrites, SweepFilesSharingRunsAcrossShardsOrStepsAreRefused) {
  std::ofstream(at("one.json")) << R"({"base": "base.json", "grid": {"train.seed": [1, 2]}})";
  std::ofstream(at("two.json"))
      << R"({"base": "base.json", "grid": {"train.seed": [1, 2]}, "set": {"train.steps": 9}})";
  ASSERT_EQ(lengen("sweep " + at("one.json") + " --out " + at("out") + " --shard 0/2").code, 0);
  const std::string manifest = text_of(root_ / "out" / "sweep.json");
  expect_one_line_refusal(lengen("sweep " + at("two.json") + " --out " + at("out") + " --shard 1/2"),
                          "finished with another config (train.steps is 6 there, 9 in the sweep)");
  EXPECT_EQ(text_of(root_ / "out" / "sweep.json"), manifest);
}

// Runs under two names that resolve to one config are one model trained twice: the sweep (and its
// dry run) refuses them in one line, before anything is written.
TEST_F(CliWrites, ASweepRefusesTwoNamesForOneConfig) {
  std::ofstream(at("named.json")) << R"({"base": "base.json", "list": [{"name": "a"}, {"name": "b"}]})";
  std::ofstream(at("written.json")) << R"({"base": "base.json", "grid": {"train.seed": [1, 1.0]}})";
  // A task parameter's default left out and written out; an alpha that softmax does not read.
  std::ofstream(at("defaults.json")) << testing::without_task_params(testing::tiny_copy_json());
  std::ofstream(at("defaulted.json"))
      << R"({"base": "defaults.json", "list": [{"name": "a"}, {"name": "b", "task.params.vocab": 32}]})";
  std::ofstream(at("unread.json")) << R"({"base": "base.json", "grid": {"model.attention.alpha": [1.5, 2]}})";
  // nape's alibi_heads -1 is half of the 2 heads; a constant schedule never reads min_lr_ratio.
  std::ofstream(at("halved.json"))
      << R"({"base": "base.json", "grid": {"model.attention.alibi_heads": [-1, 1]}})";
  std::ofstream(at("constant.json")) << R"({"base": "base.json", "set": {"train.schedule": "constant"},
      "grid": {"train.min_lr_ratio": [0, 0.1]}})";
  for (const std::string file :
       {"named.json", "written.json", "defaulted.json", "unread.json", "halved.json", "constant.json"}) {
    SCOPED_TRACE(file);
    expect_one_line_refusal(lengen("sweep " + at(file) + " --out " + at("out")), "train the same config");
    expect_one_line_refusal(lengen("sweep " + at(file) + " --out " + at("out") + " --dry-run"),
                            "train the same config");
    EXPECT_FALSE(fs::exists(at("out")));
  }
}

// Runs of one model read alike in the report: a task parameter's default left out and written out
// is one value (the runs are seeds of one row, or a repeat), and a key a run's normalizer does not
// read labels nothing.
TEST_F(CliWrites, AReportComparesConfigsAsTrained) {
  std::ofstream(at("defaults.json")) << testing::without_task_params(testing::tiny_copy_json());
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/left_out")).code, 0);
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/written_out") +
                   " --set task.params.vocab=32 --set train.seed=2 --set model.attention.alpha=2")
                .code,
            0);
  // Validation steps pick best.pt only; -1 ALiBi heads is half the heads.
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/validated") +
                   " --set train.seed=3 --set train.eval_every=2 --set model.attention.alibi_heads=1")
                .code,
            0);
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/entmax") +
                   " --set model.attention.normalizer=entmax --set model.attention.alpha=1.25")
                .code,
            0);
  const CliResult report = lengen("report " + at("runs"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string page = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(page.find("| Softmax (softmax + none) / nape | "), std::string::npos) << page;
  EXPECT_NE(page.find("(n=3)"), std::string::npos) << page;
  EXPECT_NE(page.find("| entmax + none / nape | "), std::string::npos) << page;
  EXPECT_EQ(page.find("alpha"), std::string::npos) << page;
  EXPECT_EQ(page.find("vocab"), std::string::npos) << page;
  EXPECT_EQ(page.find("eval_every"), std::string::npos) << page;
  EXPECT_EQ(page.find("alibi_heads"), std::string::npos) << page;
}

// A whole-number task parameter that tells rows apart reads as written ("vocab=40", not "40.0").
TEST_F(CliWrites, AReportNamesAWholeNumberParameterAsWritten) {
  std::ofstream(at("defaults.json")) << testing::without_task_params(testing::tiny_copy_json());
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/v32") + " --set task.params.vocab=32").code, 0);
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/v40") + " --set task.params.vocab=40").code, 0);
  ASSERT_EQ(lengen("report " + at("runs")).code, 0);
  const std::string page = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(page.find("task.params.vocab=40 "), std::string::npos) << page;
  EXPECT_EQ(page.find("vocab=40.0"), std::string::npos) << page;
}

// A task parameter that another run's task does not have labels that run with nothing, not "=?".
TEST_F(CliWrites, AReportLabelsNoRowWithAParameterItsTaskLacks) {
  std::ofstream(at("defaults.json")) << testing::without_task_params(testing::tiny_copy_json());
  ASSERT_EQ(lengen("train " + at("defaults.json") + " --out " + at("runs/copy")).code, 0);
  ASSERT_EQ(
      lengen("train " + at("defaults.json") + " --out " + at("runs/parity") + " --set task.name=parity").code,
      0);
  ASSERT_EQ(lengen("report " + at("runs")).code, 0);
  const std::string page = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(page.find("| Softmax (softmax + none) / nape, task.name=parity | "), std::string::npos) << page;
  EXPECT_EQ(page.find("=?"), std::string::npos) << page;
}

// Two runs whose train.eval_every both validate at the last step only (6 and 9 of 6 steps) picked
// best.pt alike: their best.pt results are seeds of one row, and a sweep takes them for one config.
TEST_F(CliWrites, EvalEveryPastTheStepsTellsNoRunsApart) {
  for (const auto& [name, extra] : std::vector<std::pair<std::string, std::string>>{
           {"runs/a", " --set train.eval_every=6"},
           {"runs/b", " --set train.eval_every=9 --set train.seed=2"}}) {
    const std::string run = trained(name, extra);
    ASSERT_EQ(lengen("eval " + run + " --checkpoint " + run + "/checkpoints/best.pt").code, 0);
  }
  ASSERT_EQ(lengen("report " + at("runs")).code, 0);
  const std::string page = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(page.find("| Softmax (softmax + none) / nape | "), std::string::npos) << page;
  EXPECT_NE(page.find("(n=2)"), std::string::npos) << page;
  EXPECT_EQ(page.find("eval_every"), std::string::npos) << page;
  std::ofstream(at("past.json")) << R"({"base": "base.json", "grid": {"train.eval_every": [6, 100]}})";
  expect_one_line_refusal(lengen("sweep " + at("past.json") + " --out " + at("out") + " --dry-run"),
                          "train the same config");
}

// A run without results of the decode mode reported is named as left out and labels no row.
TEST_F(CliWrites, ARunWithoutTheReportedDecodeLabelsNoRow) {
  trained("runs/greedy");
  trained("runs/forced", " --set train.seed=2");
  trained("runs/unevaluated", " --set train.seed=3");
  fs::remove(root_ / "runs" / "unevaluated" / "results.json");
  ASSERT_EQ(lengen("eval " + at("runs/greedy") + " --decode greedy").code, 0);
  const CliResult report = lengen("report " + at("runs") + " --decode greedy");
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string page = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(page.find("| Softmax (softmax + none) / nape | "), std::string::npos) << page;
  EXPECT_EQ(page.find("checkpoint="), std::string::npos) << page;
  EXPECT_NE(page.find("forced (no greedy results)"), std::string::npos) << page;
  // So is a run folder without results (in training, stopped, diverged).
  EXPECT_NE(page.find("unevaluated (a run folder without results.json)"), std::string::npos) << page;
  // A plot and its data, read alone, say what they measure.
  EXPECT_NE(text_of(root_ / "runs" / "exact_match.gp").find("exact match (%), greedy, on generated data"),
            std::string::npos);
  EXPECT_EQ(text_of(root_ / "runs" / "exact_match.dat").rfind("# ", 0), 0u);
  // The cap every greedy answer was decoded under is said.
  EXPECT_NE(page.find("decode: greedy (at most 2.2x the source length, eval.decode_cap)"), std::string::npos)
      << page;
}

// Results of a checkpoint before the end of the run's training are named above the tables.
TEST_F(CliWrites, AReportNamesResultsOfAModelNotFullyTrained) {
  const std::string run = trained("run");
  ASSERT_EQ(lengen("eval " + run + " --checkpoint " + at("run/checkpoints/step_00000003.pt")).code, 0);
  ASSERT_EQ(lengen("report " + run).code, 0);
  EXPECT_NE(text_of(root_ / "run" / "report.md").find("**Not fully trained: run (step 3 of 6)"),
            std::string::npos)
      << text_of(root_ / "run" / "report.md");
}

// A resume drops a last line of log.jsonl cut short, and refuses a folder lengen did not start.
TEST_F(CliWrites, AResumeDropsALogLineCutShort) {
  const std::string run = trained("run");
  std::ofstream(at("run/log.jsonl"), std::ios::app) << "{\"step\": 7, \"lo";
  fs::create_directories(root_ / "mine");
  std::ofstream(root_ / "mine" / "notes.txt") << "mine";
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("mine") + " --resume"),
                          "is not a lengen run folder (no run.json) and holds files; lengen trains, resumes "
                          "or --forces only runs it started: "
                          "choose another --out");
  ASSERT_EQ(lengen("train " + base() + " --out " + run + " --resume --set train.steps=9").code, 0);
  const std::string log = text_of(root_ / "run" / "log.jsonl");
  EXPECT_EQ(log.find("\"lo\n"), std::string::npos) << log;
  EXPECT_NE(log.find("\"step\":9"), std::string::npos) << log;
}

// Two identical sweeps started at once (a job array without --shard): each run is trained by one
// of them, the other skips it as in use or finished; neither records a failure.
TEST_F(CliWrites, TwoSweepsStartedTogetherNeverBothTrainARun) {
  std::ofstream(at("sweep.json"))
      << R"({"base": "base.json", "list": [{"name": "a", "train.seed": 1}, {"name": "b", "train.seed": 2}]})";
  const std::string sweep =
      std::string(LENGEN_CLI_PATH) + " sweep " + at("sweep.json") + " --out " + at("out");
  const std::string both =
      "cd " + root_.string() + " && (" + sweep + " > one.txt 2>&1 & " + sweep + " > two.txt 2>&1 & wait)";
  ASSERT_EQ(std::system(both.c_str()), 0);
  const std::string one = text_of(root_ / "one.txt"), two = text_of(root_ / "two.txt");
  EXPECT_EQ((one + two).find("FAIL"), std::string::npos) << one << two;
  for (const std::string name : {"a", "b"}) {
    EXPECT_FALSE(fs::exists(root_ / "out" / (name + ".failure.txt"))) << name;
    EXPECT_TRUE(fs::exists(root_ / "out" / name / "results.json")) << name;
  }
}

// --resume continues only a run lengen started: a user's folder with a copied config.json is
// refused before anything is written into it, so a later --force finds no marker either.
TEST_F(CliWrites, ResumeRefusesAFolderLengenDidNotStartAndWritesNothingThere) {
  const std::string run = trained("run");
  const fs::path mine = root_ / "mine";
  fs::create_directories(mine);
  fs::copy_file(fs::path(run) / "config.json", mine / "config.json");
  std::ofstream(mine / "results.json") << "my notes";
  fs::create_directories(mine / "checkpoints");
  fs::copy_file(fs::path(run) / "checkpoints" / "step_00000006.pt",
                mine / "checkpoints" / "step_00000006.pt");
  const auto listing = [&mine] {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(mine)) names.push_back(entry.path().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = listing();
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + mine.string() + " --resume --set train.steps=9"),
      "is not a lengen run folder");
  EXPECT_EQ(listing(), before);
  expect_one_line_refusal(lengen("train " + base() + " --out " + mine.string() + " --force"),
                          "not a lengen run folder");
  EXPECT_EQ(text_of(mine / "results.json"), "my notes");
}

// A checkpoint of another run with the very same model (another train.seed) is refused by
// eval and attention: its weights would be filed as this run's.
TEST_F(CliWrites, ACheckpointOfAnotherRunOfTheSameModelIsRefused) {
  const std::string ours = trained("ours");
  const CliResult other = lengen("train " + base() + " --out " + at("other") + " --set train.seed=5");
  ASSERT_EQ(other.code, 0) << other.err;
  const std::string theirs = at("other") + "/checkpoints/step_00000006.pt";
  const std::string results = text_of(fs::path(ours) / "results.json");
  expect_one_line_refusal(lengen("eval " + ours + " --checkpoint " + theirs), "was written by another run");
  EXPECT_EQ(text_of(fs::path(ours) / "results.json"), results);
  expect_one_line_refusal(
      lengen("attention " + ours + " --length 4 --checkpoint " + theirs + " --out " + at("maps")),
      "was written by another run");
  // A copy of the whole run folder is the same run.
  const std::string copy = at("copy");
  fs::copy(at("other"), copy, fs::copy_options::recursive);
  EXPECT_EQ(lengen("eval " + copy + " --checkpoint " + theirs).code, 0);
}

// A stop signal during an evaluation ends it as interrupted (exit 130), results.json as it was.
// The signal is sent once the evaluation reports progress, not after a fixed sleep: on a loaded
// machine the process may still be loading LibTorch after seconds.
TEST_F(CliWrites, AStopSignalDuringEvaluationIsAnInterruption) {
  const std::string run = trained("run");
  const std::string results = text_of(fs::path(run) / "results.json");
  const CliResult result = lengen(
      "eval " + run + " --lengths 4000 --samples 2000 --batch-size 1 > " + at("eval_out.txt") +
      " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'eval length' " + at("eval_out.txt") +
      " && break; sleep 0.1; done; kill -TERM $pid; wait $pid; echo $? > " + at("code.txt") + "; true");
  (void)result;
  EXPECT_EQ(text_of(root_ / "code.txt"), "130\n");
  EXPECT_EQ(text_of(fs::path(run) / "results.json"), results);
}

// A training's evaluation stopped in its second length keeps the first in results.json; the sweep
// resumes such a run rather than skip it, and the resume measures only what is missing.
TEST_F(CliWrites, AStoppedEvaluationKeepsItsFinishedLengthsForTheResume) {
  const std::string run = at("sweep/a"), out = at("train_out.txt");
  const std::string sets = " --set eval.lengths=[4,4000] --set eval.long_from=4000 --set eval.batch_size=1";
  (void)lengen("train " + base() + " --out " + run + sets + " --set eval.long_samples=2000 > " + out +
               " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'length 4: exact' " + out +
               " && break; sleep 0.1; done; kill -TERM $pid; wait $pid; echo $? > " + at("code.txt") +
               "; true");
  ASSERT_EQ(text_of(root_ / "code.txt"), "130\n") << text_of(out);
  const nlohmann::json stopped = read_json_file(run + "/results.json")["results"]["teacher_forced"];
  EXPECT_EQ(stopped.size(), 1u) << stopped.dump();
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  EXPECT_NE(
      lengen("sweep " + at("sweep.json") + " --out " + at("sweep") + " --dry-run").out.find("a  [resume]"),
      std::string::npos);
  const CliResult resumed =
      lengen("train " + base() + " --out " + run + " --resume" + sets + " --set eval.long_samples=3");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE((resumed.out + resumed.err).find("length 4: kept"), std::string::npos) << resumed.err;
  const nlohmann::json results = read_json_file(run + "/results.json")["results"]["teacher_forced"];
  EXPECT_EQ(results["4"], stopped["4"]);
  EXPECT_EQ(results["4000"]["samples"], 3);
}

// A stopped training prints the command that resumes it as it started, with its --set: repeated
// without them, the resume would train on to the config file's train.steps.
TEST_F(CliWrites, AStoppedTrainingSaysTheCommandThatResumesIt) {
  const CliResult result = lengen(
      "train " + base() + " --out " + at("run") + " --set train.steps=100000 > " + at("train_out.txt") +
      " 2>&1 & pid=$!; for i in $(seq 1200); do grep -q 'step 3/' " + at("train_out.txt") +
      " && break; sleep 0.1; done; kill -TERM $pid; wait $pid; " + "echo $? > " + at("code.txt") + "; true");
  (void)result;
  EXPECT_EQ(text_of(root_ / "code.txt"), "130\n");
  const std::string again =
      "resume with: lengen train " + base() + " --out " + at("run") + " --set train.steps=100000 --resume";
  EXPECT_NE(text_of(root_ / "train_out.txt").find(again), std::string::npos)
      << text_of(root_ / "train_out.txt");
}

// A run whose config.json is gone is grouped by the training its results record (trained_with):
// runs of other models, learning rates or tasks are never averaged as seeds of one another.
TEST_F(CliWrites, RunsWithoutConfigJsonAreGroupedByWhatTrainedThem) {
  trained("bare/a");
  trained("bare/wider", " --set model.d_model=32 --set train.seed=2");
  trained("bare/faster", " --set train.lr=0.003 --set train.seed=3");
  trained("bare/reverse", " --set task.name=reverse --set train.seed=4");
  for (const char* run : {"a", "wider", "faster", "reverse"})
    fs::remove(root_ / "bare" / run / "config.json");
  const CliResult report = lengen("report " + at("bare"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = text_of(root_ / "bare" / "report.md");
  for (const std::string label : {"model.d_model=32", "train.lr=0.003", "task.name=reverse"})
    EXPECT_NE(md.find(label), std::string::npos) << label << "\n" << md;
  for (const std::string more : {"(n=2)", "(n=3)", "(n=4)"})
    EXPECT_EQ(md.find(more), std::string::npos) << md;
  EXPECT_EQ(md.find("config unknown"), std::string::npos) << md;
}

// Runs of one cell measured on other sample counts at a length are named on the page.
TEST_F(CliWrites, AReportNamesCellsOfUnequalSampleCounts) {
  trained("counts/a");
  trained("counts/b", " --set train.seed=2");
  ASSERT_EQ(lengen("eval " + at("counts/b") + " --samples 2").code, 0);
  ASSERT_EQ(lengen("report " + at("counts")).code, 0);
  const std::string md = text_of(root_ / "counts" / "report.md");
  EXPECT_NE(md.find("Runs were evaluated on different numbers of samples at length(s) 4 (2 or 4)"),
            std::string::npos)
      << md;
}

// A run folder whose name holds a newline is shown escaped: the page's lines stay whole.
TEST_F(CliWrites, AReportEscapesControlCharactersInRunNames) {
  trained("ctl/a");
  fs::rename(root_ / "ctl" / "a", root_ / "ctl" / "n\nl");
  ASSERT_EQ(lengen("report " + at("ctl")).code, 0);
  const std::string md = text_of(root_ / "ctl" / "report.md");
  EXPECT_NE(md.find("Runs: n\\x0al\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("n\nl"), std::string::npos) << md;
}

// model.prefill_chunk is an evaluation setting: training attends all queries at once whatever it
// is, so two runs that differ in it train one model, bit for bit (the report's repeat rule).
TEST_F(CliWrites, PrefillChunkLeavesTrainingAlone) {
  trained("chunks/whole");
  trained("chunks/ones", " --set model.prefill_chunk=1");
  const auto weights = [&](const std::string& run) {
    return read_json_file(
        at(run + "/results.json"))["results"]["teacher_forced"]["4"]["model"]["weights_hash"];
  };
  EXPECT_EQ(weights("chunks/whole"), weights("chunks/ones"));
}

// A config.json lengen cannot read is refused by the report as by eval: flattened as it stands,
// its unresolved values (alibi_heads -1 and 1 are one setting) would label rows apart.
TEST_F(CliWrites, AReportRefusesAConfigJsonLengenCannotRead) {
  trained("odd/a");
  trained("odd/b", " --set train.seed=2");
  nlohmann::json config = read_json_file(at("odd/b/config.json"));
  config["model"]["colour"] = "blue";
  std::ofstream(at("odd/b/config.json"), std::ios::trunc) << config.dump(2);
  expect_one_line_refusal(lengen("report " + at("odd")),
                          at("odd/b/config.json") + ": unknown config key 'model.colour'");
  EXPECT_FALSE(fs::exists(root_ / "odd" / "report.md"));
}

// A run trained on --data files is not a seed of one trained on generated data.
TEST_F(CliWrites, AReportKnowsWhatARunTrainedOnAndWith) {
  ASSERT_EQ(
      lengen("data --task copy --param vocab=4 --len-min 2 --len-max 4 --train 64 --out " + at("files")).code,
      0);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("runs/on_files") + " --data " + at("files")).code, 0);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("runs/generated") + " --set train.seed=2").code, 0);
  const CliResult report = lengen("report " + at("runs"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = text_of(root_ / "runs" / "report.md");
  EXPECT_NE(md.find("data=files "), std::string::npos) << md;
  EXPECT_NE(md.find("data=generated"), std::string::npos) << md;
}

}  // namespace
}  // namespace lengen
