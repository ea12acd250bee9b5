// A run's results.json holds that run's results only: eval refuses a checkpoint it cannot tell
// is the run's (a damaged marker, a copy of the run trained further), a config.json edited since
// the results were written, results on a second data folder and another run's results.json linked
// in; a sweep never trains over an evaluated run whose step checkpoints were deleted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_folder_test.h"
#include "lengen/json_file.h"
#include "lengen/run_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::expect_one_line_refusal;
using testing::text_of;

class CliResultsBelong : public testing::CliFolderTest {
 protected:
  CliResultsBelong() : CliFolderTest("lengen_cli_results_belong") {}
  // Exit 2, one line holding `expected`, and the run's results.json as it was.
  void expect_refused(const std::string& args, const std::string& run, const std::string& expected) {
    SCOPED_TRACE(args);
    const std::string before = text_of(RunFolder(run).results_path());
    expect_one_line_refusal(lengen(args), expected);
    EXPECT_EQ(text_of(RunFolder(run).results_path()), before);
  }
};

// Without the run identity in its marker, eval cannot tell the run's checkpoints from another
// run's of the same config: it refuses them (naming the marker) instead of filing another seed's
// model under this run; a failed --resume leaves the damaged marker as it was.
TEST_F(CliResultsBelong, ADamagedMarkerRefusesCheckpointsAndIsNotReplaced) {
  const std::string a = trained("a");
  const std::string b = trained("b", " --set train.seed=2");
  std::ofstream(RunFolder(a).marker_path()) << "";
  expect_refused("eval " + a + " --lengths 3 --checkpoint " + b + "/checkpoints/step_00000006.pt", a,
                 ".lengen_run holds no run id (missing or damaged)");
  expect_refused("eval " + a + " --lengths 3", a, ".lengen_run holds no run id");
  const CliResult resume = lengen("train " + base() + " --out " + a + " --resume --set train.steps=9");
  EXPECT_EQ(resume.code, 2) << resume.err;
  EXPECT_NE(resume.err.find(".lengen_run holds no run id"), std::string::npos) << resume.err;
  EXPECT_EQ(text_of(RunFolder(a).marker_path()), "");
  // Every command reads a marker one way: one lengen would not write (another first line, an id
  // not of lengen's form) holds no run id for eval as for --force.
  const std::string id = RunFolder(b).run_id();
  for (const std::string& marker :
       {"LENGEN RUN FOLDER\nid " + id + "\n", "\nlengen run folder\nid " + id + "\n",
        "lengen run folder\nid " + id + " \n"}) {
    std::ofstream(RunFolder(b).marker_path()) << marker;
    expect_refused("eval " + b + " --lengths 3", b, ".lengen_run holds no run id");
  }
}

// A copy of the run folder carries the run's identity; trained further, its checkpoints are past
// the run's train.steps and are not the run's model as configured.
TEST_F(CliResultsBelong, ACopyTrainedFurtherIsNotTheRunsModel) {
  const std::string a = trained("a");
  fs::copy(a, at("copy"), fs::copy_options::recursive);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("copy") + " --resume --set train.steps=9").code, 0);
  expect_refused("eval " + a + " --checkpoint " + at("copy") + "/checkpoints/step_00000009.pt", a,
                 "was trained under a schedule of train.steps=9, this run's config.json has 6");
}

// A checkpoint a copy of the run trained further, copied back, resumes nothing: the run's log does
// not reach its step, and its curves would skip the steps the copy trained. The refusal writes
// nothing; with the checkpoint moved aside the run resumes.
TEST_F(CliResultsBelong, ACheckpointACopyTrainedFurtherDoesNotResumeTheRun) {
  const std::string a = trained("a");
  fs::copy(a, at("copy"), fs::copy_options::recursive);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("copy") + " --resume --set train.steps=9").code, 0);
  fs::copy_file(at("copy/checkpoints/step_00000009.pt"), at("a/checkpoints/step_00000009.pt"));
  const std::string log = text_of(root_ / "a" / "log.jsonl"), config = text_of(root_ / "a" / "config.json");
  expect_one_line_refusal(lengen("train " + base() + " --out " + a + " --resume --set train.steps=12"),
                          "cannot resume " + a + ": its checkpoint " + a +
                              "/checkpoints/step_00000009.pt is of step 9, but " + a +
                              "/log.jsonl records training to step 6 only");
  EXPECT_EQ(text_of(root_ / "a" / "log.jsonl"), log);
  EXPECT_EQ(text_of(root_ / "a" / "config.json"), config);
  fs::rename(at("a/checkpoints/step_00000009.pt"), at("step_00000009.pt"));
  // A checkpoint renamed by hand resumes nothing either: the newest is chosen by its name.
  fs::copy_file(at("a/checkpoints/step_00000003.pt"), at("a/checkpoints/step_00000007.pt"));
  expect_one_line_refusal(lengen("train " + base() + " --out " + a + " --resume --set train.steps=9"),
                          "cannot resume " + a + ": " + a +
                              "/checkpoints/step_00000007.pt holds step 3, not the "
                              "step its name says");
  fs::remove(at("a/checkpoints/step_00000007.pt"));
  EXPECT_EQ(text_of(root_ / "a" / "log.jsonl"), log);
  ASSERT_EQ(lengen("train " + base() + " --out " + a + " --resume --set train.steps=9").code, 0);
  EXPECT_EQ(RunFolder(a).last_logged_training_step(), 9);
  // Within one log window too: a copy logs every 50 steps, and its last step (20) is logged.
  const std::string b = trained("b", " --set train.log_every=50");
  fs::copy(b, at("b_copy"), fs::copy_options::recursive);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("b_copy") +
                   " --resume --set train.log_every=50 --set train.steps=8")
                .code,
            0);
  fs::copy_file(at("b_copy/checkpoints/step_00000008.pt"), at("b/checkpoints/step_00000008.pt"));
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + b + " --resume --set train.log_every=50 --set train.steps=10"),
      "/log.jsonl records training to step 6 only");
  fs::remove(at("b/checkpoints/step_00000008.pt"));
  // An emptied log does not reach the run's checkpoint either; a deleted one is said.
  std::ofstream(at("b/log.jsonl"), std::ios::trunc).close();
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + b + " --resume --set train.log_every=50 --set train.steps=10"),
      "/log.jsonl records no training step (emptied by hand?); the log would skip steps 1-");
  fs::remove(at("b/log.jsonl"));
  const CliResult no_log =
      lengen("train " + base() + " --out " + b + " --resume --set train.log_every=50 --set train.steps=10");
  ASSERT_EQ(no_log.code, 0) << no_log.err;
  EXPECT_NE(no_log.out.find("has no log.jsonl: the new log starts after step 6"), std::string::npos)
      << no_log.out;
}

// A copy whose checkpoints/ links into the run's folder would write and prune the run's
// checkpoints: a resume (or a new training) through it is refused, and the run's are untouched.
TEST_F(CliResultsBelong, ACheckpointsLinkIntoAnotherRunIsRefused) {
  const std::string a = trained("a");
  fs::copy(a, at("b"), fs::copy_options::recursive);
  fs::remove_all(at("b/checkpoints"));
  fs::create_directory_symlink("../a/checkpoints", at("b/checkpoints"));
  const std::vector<std::string> checkpoints = RunFolder(a).checkpoints();
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("b") + " --resume --set train.steps=9"),
                          at("b") + "/checkpoints is a link into the run folder ");
  EXPECT_EQ(RunFolder(a).checkpoints(), checkpoints);
  EXPECT_FALSE(fs::exists(at("a/checkpoints/step_00000009.pt")));
  // A link out to a folder of its own (another disk) is allowed; a copy that kept that link
  // shares the folder with the run, and neither resumes through it.
  fs::remove(at("b/checkpoints"));
  fs::rename(at("a/checkpoints"), at("disk"));
  fs::create_directory_symlink(at("disk"), at("a/checkpoints"));
  fs::create_directory_symlink(at("disk"), at("b/checkpoints"));
  const std::string shared = " links to " + at("disk") + ", as the run folder ";
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("b") + " --resume --set train.steps=9"),
                          at("b") + "/checkpoints" + shared + at("a") + "'s does");
  expect_one_line_refusal(lengen("train " + base() + " --out " + a + " --resume --set train.steps=9"),
                          at("a") + "/checkpoints" + shared + at("b") + "'s does");
  EXPECT_EQ(RunFolder(a).checkpoints().size(), checkpoints.size());
  fs::remove(at("b/checkpoints"));
  ASSERT_EQ(lengen("train " + base() + " --out " + a + " --resume --set train.steps=9").code, 0);
  EXPECT_TRUE(fs::exists(at("disk/step_00000009.pt")));
  // A copy elsewhere that kept the link: its checkpoints name the run folder that wrote them.
  fs::create_directories(at("sub"));
  fs::copy(a, at("sub/c"), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  ASSERT_TRUE(fs::is_symlink(at("sub/c/checkpoints")));
  const std::vector<std::string> on_disk = RunFolder(a).checkpoints();
  expect_one_line_refusal(
      lengen("train " + base() + " --out " + at("sub/c") + " --resume --set train.steps=12"),
      ": its checkpoints/ leads to the checkpoints of the run folder ");
  EXPECT_EQ(RunFolder(a).checkpoints(), on_disk);
  // Moved, not copied: the folder that wrote them is gone, and the run resumes.
  fs::remove_all(at("sub/c"));
  fs::rename(a, at("sub/c"));
  ASSERT_EQ(lengen("train " + base() + " --out " + at("sub/c") + " --resume --set train.steps=12").code, 0);
}

// train.steps may only grow on --resume: a copy resumed with more steps trains its later
// checkpoints under a longer schedule than the run's, and they are not the run's models.
TEST_F(CliResultsBelong, ACopyResumedWithMoreStepsIsNotTheRun) {
  const std::string a = trained("a");
  fs::copy(a, at("longer"), fs::copy_options::recursive);
  fs::remove(at("longer") + "/checkpoints/step_00000006.pt");
  ASSERT_EQ(lengen("train " + base() + " --out " + at("longer") + " --resume --set train.steps=9").code, 0);
  expect_refused("eval " + a + " --lengths 3 --checkpoint " + at("longer") + "/checkpoints/step_00000006.pt",
                 a, "was trained under a schedule of train.steps=9, this run's config.json has 6");
}

// A copy resumed with fewer steps than the run (but more than it had trained) trains its later
// checkpoints under another learning-rate schedule than the run's: its checkpoints carry the
// schedule they were trained under and are refused. The run's own earlier checkpoint, from before
// a resume that changed train.steps, is still its model.
TEST_F(CliResultsBelong, ACopyResumedWithFewerStepsIsNotTheRun) {
  const std::string a = trained("a", " --set train.steps=9 --set train.keep_checkpoints=5");
  fs::copy(a, at("shorter"), fs::copy_options::recursive);
  fs::remove(at("shorter") + "/checkpoints/step_00000006.pt");
  fs::remove(at("shorter") + "/checkpoints/step_00000009.pt");
  // The results of step 9 are not those of a 6-step run: the resume refuses them first.
  expect_one_line_refusal(lengen("train " + base() + " --out " + at("shorter") +
                                 " --resume --set train.steps=6 --set train.keep_checkpoints=5"),
                          "/results.json holds results of step 9, which would no longer be the run's");
  fs::remove(at("shorter") + "/results.json");
  ASSERT_EQ(lengen("train " + base() + " --out " + at("shorter") +
                   " --resume --set train.steps=6 --set train.keep_checkpoints=5")
                .code,
            0);
  expect_refused("eval " + a + " --lengths 3 --checkpoint " + at("shorter") + "/checkpoints/step_00000006.pt",
                 a, "was trained under the schedule 9@0,6@3 (train.steps@from step), but ");
  const std::string b = trained("b", " --set train.keep_checkpoints=5");
  ASSERT_EQ(lengen("train " + base() + " --out " + b +
                   " --resume --set train.steps=9 --set train.keep_checkpoints=5")
                .code,
            0);
  EXPECT_EQ(lengen("eval " + b + " --lengths 3 --checkpoint " + b + "/checkpoints/step_00000006.pt").code, 0);
}

// config.json edited to match a --set (another learning rate, another seed) passes the resume's
// config check; the checkpoint says what it was trained with, and the resume is refused before a
// step is taken.
TEST_F(CliResultsBelong, AResumeUnderAnEditedConfigIsRefused) {
  const std::string a = trained("a");
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"lr", "0.005"}, {"seed", "7"}}) {
    SCOPED_TRACE(key);
    const std::string copy = at("copy_" + key);
    fs::copy(a, copy, fs::copy_options::recursive);
    nlohmann::json edited = read_json_file(copy + "/config.json");
    edited["train"][key] = nlohmann::json::parse(value);
    std::ofstream(copy + "/config.json") << edited.dump(2);
    // Moved aside as the refusal of an edited seed by results.json suggests: the checkpoint still
    // says what it was trained with.
    fs::rename(RunFolder(copy).results_path(), copy + "/results.aside");
    const std::string log = text_of(RunFolder(copy).log_path());
    expect_one_line_refusal(lengen("train " + base() + " --out " + copy +
                                   " --resume --set train.steps=9 --set train." + key + "=" + value),
                            "cannot resume " + copy + ": checkpoint " + copy +
                                "/checkpoints/step_00000006.pt was trained with train." + key);
    EXPECT_FALSE(fs::exists(copy + "/checkpoints/step_00000009.pt"));
    EXPECT_EQ(text_of(RunFolder(copy).log_path()), log);
  }
}

// results.json records what the evaluated model was trained with: a copy of a run whose
// config.json was edited (another learning rate) is not reported under the edited setting.
TEST_F(CliResultsBelong, TheReportDoesNotLabelResultsWithAnEditedConfig) {
  const std::string a = trained("a");
  fs::create_directories(at("both"));
  fs::copy(a, at("both/lrA"), fs::copy_options::recursive);
  fs::copy(a, at("both/lrB"), fs::copy_options::recursive);
  nlohmann::json edited = read_json_file(at("both/lrB/config.json"));
  edited["train"]["lr"] = 0.005;
  std::ofstream(at("both/lrB/config.json")) << edited.dump(2);
  expect_one_line_refusal(lengen("report " + at("both") + " --out " + at("report")),
                          "lrB/results.json holds results of a model trained with train.lr=0.001, but ");
}

// A config.json edited after the results were written (another task, another seed) would file new
// results beside the old ones under one label.
TEST_F(CliResultsBelong, AnEditedConfigDoesNotRelabelTheResults) {
  const std::string a = trained("a");
  const std::string config = RunFolder(a).config_path();
  const std::string saved = text_of(config);
  nlohmann::json edited = read_json_file(config);
  edited["task"]["name"] = "reverse";
  std::ofstream(config) << edited.dump(2);
  // The checkpoint names what it was trained with, before the results file is read.
  expect_refused("eval " + a + " --lengths 3", a,
                 "was trained with task.name=\"copy\", this run's config.json has \"reverse\"");
  edited = nlohmann::json::parse(saved);
  edited["train"]["seed"] = 5;
  std::ofstream(config) << edited.dump(2);
  expect_refused("eval " + a + " --lengths 3", a,
                 "was trained with train.seed=1, this run's config.json has 5");
}

// Results on the files of one folder and of another would share one table in the report; so
// would results on a folder's files before and after they were rewritten. A folder moved or
// copied holds the same files: its results are the same table, filed under its new place.
TEST_F(CliResultsBelong, ResultsOnTwoDataFoldersDoNotShareATable) {
  const std::string a = trained("a");
  const auto write_split = [&](const std::string& folder, const std::string& name, const std::string& line) {
    fs::create_directories(at(folder));
    std::ofstream(at(folder) + "/" + name + ".src") << line << "\n";
    std::ofstream(at(folder) + "/" + name + ".trg") << line << "\n";
  };
  write_split("one", "test_0_4", "1 2 3 0");
  write_split("one", "test_1_3", "1 2 3");
  write_split("two", "test_0_4", "3 2 1 0");
  ASSERT_EQ(lengen("eval " + a + " --data " + at("one")).code, 0);
  expect_refused("eval " + a + " --data " + at("two"), a, "holds results on the files of ");
  EXPECT_EQ(lengen("eval " + a + " --data " + at("one")).code, 0);  // the same folder again is fine

  // The folder moved: the same files, so the same table, now naming where they are.
  fs::rename(at("one"), at("moved"));
  const CliResult moved = lengen("eval " + a + " --data " + at("moved"));
  ASSERT_EQ(moved.code, 0) << moved.err;
  // Files without lengen data's record are read as the task's samples, and the log says so.
  EXPECT_NE(moved.out.find("has no data.json (lengen data writes one): its files are read as copy samples"),
            std::string::npos)
      << moved.out;
  const std::string results = text_of(RunFolder(a).results_path());
  EXPECT_EQ(results.find(at("one")), std::string::npos) << results;
  EXPECT_NE(results.find(at("moved")), std::string::npos) << results;
  EXPECT_EQ(lengen("report " + a + " --on-files --out " + at("report")).code, 0);

  // Its files rewritten (a split changed, another gone), the old results are of files it no
  // longer holds: refused, and so is a folder whose test_1_3 is gone.
  write_split("moved", "test_0_4", "2 2 2 0");
  expect_refused("eval " + a + " --data " + at("moved"), a, "test_0_4 is not the file measured (hash ");
  write_split("moved", "test_0_4", "1 2 3 0");
  fs::remove(at("moved") + "/test_1_3.src");
  expect_refused("eval " + a + " --data " + at("moved"), a, "test_1_3 is gone");
}

// A sweep run whose step checkpoints were deleted to save space is kept as it is (a failure
// naming why), not trained anew over its results.json, its best.pt or its log; a failure note the
// user annotated is never replaced or removed.
TEST_F(CliResultsBelong, ASweepKeepsAnEvaluatedRunWithoutCheckpoints) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  const fs::path run = root_ / "out" / "a";
  for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
    if (entry.path().filename().string().rfind("step_", 0) == 0) fs::remove(entry.path());
  }
  const std::string results = text_of(run / "results.json");
  const CliResult plan = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(plan.out.find("a  [kept: it has results.json but no step checkpoint"), std::string::npos)
      << plan.out;
  const CliResult rerun = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  EXPECT_EQ(rerun.code, 1) << rerun.out << rerun.err;
  EXPECT_EQ(text_of(run / "results.json"), results);
  EXPECT_NE(text_of(root_ / "out" / "a.failure.txt").find("no step checkpoint to resume from"),
            std::string::npos);
  // Without results.json, the trained model (best.pt) and then the log alone keep it too.
  const std::string log = text_of(run / "log.jsonl");
  fs::rename(run / "results.json", root_ / "results.json");
  EXPECT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 1);
  EXPECT_NE(text_of(root_ / "out" / "a.failure.txt").find("it has checkpoints/best.pt (a trained model)"),
            std::string::npos);
  fs::remove(run / "checkpoints" / "best.pt");
  // The user annotates lengen's note: the next failure's note goes above it, nothing of it lost.
  std::ofstream(root_ / "out" / "a.failure.txt", std::ios::app)
      << "mine: deleted the checkpoints on purpose\n";
  EXPECT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 1);
  const std::string note = text_of(root_ / "out" / "a.failure.txt");
  EXPECT_EQ(note.rfind("kept as it is (not started)\n", 0), 0u) << note;
  EXPECT_NE(note.find("its log.jsonl records training to step 6, but its step checkpoints are gone"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("mine: deleted the checkpoints on purpose"), std::string::npos) << note;
  EXPECT_EQ(text_of(run / "log.jsonl"), log);
  // Moved away, the run trains anew; the annotated note stays, and the sweep says so.
  // (Kept too: a run with checkpoints whose config.json is gone, which a resume refuses.)
  fs::rename(run, root_ / "a_old");
  const CliResult anew = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  ASSERT_EQ(anew.code, 0) << anew.out << anew.err;
  EXPECT_NE(anew.out.find("done a (" + at("out/a.failure.txt") + " kept: edited since the sweep wrote it)"),
            std::string::npos)
      << anew.out;
  const std::string kept_below = "--- the earlier note, edited since lengen wrote it, kept as it is ---\n";
  ASSERT_NE(note.find(kept_below), std::string::npos) << note;
  EXPECT_EQ(text_of(root_ / "out" / "a.failure.txt"), note.substr(note.find(kept_below) + kept_below.size()));
  fs::rename(run / "config.json", root_ / "config.json");
  const CliResult lost = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(
      lost.out.find("a  [kept: it has checkpoints but no config.json: put it back (" +
                    at("out/a.config.json") + " holds the config the sweep started it with) to resume it]"),
      std::string::npos)
      << lost.out;
  const std::vector<std::string> checkpoints = RunFolder(run.string()).checkpoints();
  EXPECT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 1);
  EXPECT_EQ(RunFolder(run.string()).checkpoints(), checkpoints);
  expect_one_line_refusal(lengen("train " + base() + " --out " + run.string() + " --resume"),
                          "it has no config.json but has checkpoints: put its config.json back");
}

// A sweep run left to resume whose newest checkpoint is past the train.steps the sweep now asks for
// cannot resume: the sweep refuses it in one line before anything is written, and its dry run
// lists it as such and ends the same way. A finished run whose config.json was edited by hand is
// named as edited (restore it), not as one to retrain.
TEST_F(CliResultsBelong, ASweepRefusesARunItCannotResumeAndItsDryRunToo) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  std::ofstream(at("shorter.json"))
      << R"({"base": "base.json", "set": {"train.steps": 3}, "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  const fs::path run = root_ / "out" / "a";
  fs::remove(run / "results.json");  // as if stopped before its evaluation
  const std::string log = text_of(run / "log.jsonl");
  const std::string refusal =
      "sweep: " + at("out/a") +
      " cannot resume: its newest checkpoint is step 6, past train.steps=3 in the sweep";
  const CliResult plan = lengen("sweep " + at("shorter.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(plan.out.find(
                "a  [cannot resume: its newest checkpoint is step 6, past train.steps=3 in the sweep (set "
                "train.steps to at least 6); the sweep refuses it]"),
            std::string::npos)
      << plan.out;
  expect_one_line_refusal(plan, refusal);
  expect_one_line_refusal(lengen("sweep " + at("shorter.json") + " --out " + at("out")), refusal);
  EXPECT_FALSE(fs::exists(root_ / "out" / "a.failure.txt"));
  EXPECT_EQ(text_of(run / "log.jsonl"), log);
  // Resumed and evaluated under its own sweep; then its config.json is edited by hand.
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  ASSERT_TRUE(fs::exists(run / "results.json"));
  nlohmann::json config = read_json_file((run / "config.json").string());
  config["model"]["d_mlp"] = 64;
  std::ofstream(run / "config.json") << config.dump(2);
  expect_one_line_refusal(
      lengen("sweep " + at("sweep.json") + " --out " + at("out")),
      "its config.json was edited since the sweep started it (model.d_mlp is 64 there, 32 in " +
          at("out/a.config.json") + "): restore it, or use another --out");
}

// A results.json linked (or copied) in from another run of the same method and seed carries that
// run's id: eval does not merge into it (nor write through the link), and the report does not file
// its numbers under this run's config.
TEST_F(CliResultsBelong, AnotherRunsResultsFileLinkedInIsRefused) {
  const std::string a = trained("a");
  const std::string b = trained("b", " --set train.lr=0.002");
  fs::create_directories(at("both"));
  fs::rename(a, at("both/a"));
  fs::rename(b, at("both/b"));
  const std::string b_results = RunFolder(at("both/b")).results_path();
  fs::remove(b_results);
  fs::create_symlink(RunFolder(at("both/a")).results_path(), b_results);
  expect_refused("eval " + at("both/b") + " --lengths 3", at("both/a"),
                 "was written by another run (run id ");
  EXPECT_TRUE(fs::is_symlink(b_results));
  const CliResult report = lengen("report " + at("both") + " --out " + at("report"));
  EXPECT_EQ(report.code, 2) << report.err;
  EXPECT_NE(report.err.find(b_results + " was written by another run"), std::string::npos) << report.err;
}

// The run's own results.json kept elsewhere behind a link: the new results are written in the
// link's place, said in a line, and the file the link led to is left as it was.
TEST_F(CliResultsBelong, AResultsFileLinkIsReplacedWithALine) {
  const std::string a = trained("a");
  const std::string results = RunFolder(a).results_path();
  fs::rename(results, at("kept_results.json"));
  const std::string kept = text_of(at("kept_results.json"));
  fs::create_symlink(at("kept_results.json"), results);
  const CliResult evaluated = lengen("eval " + a + " --lengths 3");
  ASSERT_EQ(evaluated.code, 0) << evaluated.err;
  EXPECT_NE(evaluated.out.find(results + " is a link to " + at("kept_results.json") +
                               ": the results are written as a file in the link's place"),
            std::string::npos)
      << evaluated.out;
  EXPECT_FALSE(fs::is_symlink(results));
  EXPECT_EQ(text_of(at("kept_results.json")), kept);
}

// Another run's results copied in with the run id made to match, or with the run id (and the
// training record) stripped: eval neither merges into them nor rewrites their training record
// under this run's config, so the report keeps refusing them.
TEST_F(CliResultsBelong, AnotherRunsResultsWithTheIdForgedOrStrippedAreNotMerged) {
  const std::string a = trained("a");
  const std::string b = trained("b", " --set train.lr=0.002");
  const nlohmann::json theirs = read_json_file(RunFolder(b).results_path());
  const std::string own_id = read_json_file(RunFolder(a).results_path())["run_id"];
  nlohmann::json forged = theirs;
  forged["run_id"] = own_id;
  std::ofstream(RunFolder(a).results_path()) << forged.dump(2);
  // The run id is part of the file's fingerprint, and of each entry's record.
  expect_refused("eval " + a + " --lengths 3", a, "does not match its record_hash");
  forged.erase("record_hash");
  std::ofstream(RunFolder(a).results_path()) << forged.dump(2);
  expect_refused("eval " + a + " --lengths 3", a, "no record_hash beside results/teacher_forced/4's");
  nlohmann::json stripped = theirs;
  stripped.erase("run_id");
  std::ofstream(RunFolder(a).results_path()) << stripped.dump(2);
  expect_refused("eval " + a + " --lengths 3", a, "does not match its record_hash");
  forged.erase("trained_with");
  std::ofstream(RunFolder(a).results_path()) << forged.dump(2);
  expect_refused("eval " + a + " --lengths 3", a, "no record_hash beside");
}

// A resume with a --set that changes the run is refused for that reason, before anything about
// its results.json (which a changed method or seed would also contradict) or its data.
TEST_F(CliResultsBelong, AResumeWithAChangedKeyNamesTheKeyFirst) {
  const std::string a = trained("a");
  expect_refused("train " + base() + " --out " + a + " --resume --set train.steps=9 --set train.seed=4", a,
                 "cannot resume " + a + ": config key 'train.seed' differs from the run's config.json");
  expect_refused("train " + base() + " --out " + a +
                     " --resume --set train.steps=9 --set model.attention.normalizer=sparsemax",
                 a, "config key 'model.attention.normalizer' differs");
}

// Results that are not the run's own, in a results.json that says it is: another run's results
// section pasted in (its records name their run), a copy's results of a step past the run's
// train.steps, a label edited by hand. eval and report refuse them in one line.
TEST_F(CliResultsBelong, ResultsOfAnotherRunOrStepOrAnEditedLabelAreRefused) {
  const std::string a = trained("a");
  const std::string b = trained("b", " --set train.seed=2");
  fs::create_directories(at("mix"));
  fs::copy(a, at("mix/a"), fs::copy_options::recursive);
  nlohmann::json mine = read_json_file(RunFolder(at("mix/a")).results_path());
  const nlohmann::json theirs = read_json_file(RunFolder(b).results_path());
  mine["results"] = theirs["results"];
  std::ofstream(RunFolder(at("mix/a")).results_path()) << mine.dump(2);
  expect_one_line_refusal(
      lengen("report " + at("mix") + " --out " + at("mix_report")),
      "was measured by run " + theirs["run_id"].get<std::string>() + ", not by this file's run");
  expect_refused("eval " + at("mix/a") + " --lengths 3", at("mix/a"), "was measured by run");

  // A copy of `a` trained on to step 9: its results are not those of a 6-step run.
  fs::copy(a, at("further"), fs::copy_options::recursive);
  ASSERT_EQ(lengen("train " + base() + " --out " + at("further") + " --resume --set train.steps=9").code, 0);
  fs::create_directories(at("xs"));
  fs::copy(a, at("xs/x"), fs::copy_options::recursive);
  fs::copy_file(RunFolder(at("further")).results_path(), RunFolder(at("xs/x")).results_path(),
                fs::copy_options::overwrite_existing);
  expect_one_line_refusal(lengen("report " + at("xs") + " --out " + at("xs_report")),
                          "holds results of step 9 (teacher_forced, length 4), past the train.steps=6 of");
  expect_refused("eval " + at("xs/x") + " --lengths 3", at("xs/x"),
                 "holds results of step 9 (teacher_forced, length 4), past this run's train.steps (6)");

  // The label of the results: the training lengths the multiples count from, trained_with's keys.
  const std::vector<std::pair<std::string, nlohmann::json>> edits = {
      {"/train_len_max", 2}, {"/trained_with/model/d_mlp", nullptr}, {"/trained_with", nullptr}};
  for (const auto& [pointer, value] : edits) {
    SCOPED_TRACE(pointer);
    fs::remove_all(at("label"));
    fs::create_directories(at("label"));
    fs::copy(a, at("label/a"), fs::copy_options::recursive);
    nlohmann::json edited = read_json_file(RunFolder(at("label/a")).results_path());
    const nlohmann::json::json_pointer where(pointer);
    if (value.is_null()) {
      edited[where.parent_pointer()].erase(where.back());
    } else {
      edited[where] = value;
    }
    std::ofstream(RunFolder(at("label/a")).results_path()) << edited.dump(2);
    expect_one_line_refusal(lengen("report " + at("label") + " --out " + at("label_report")),
                            "does not match its record_hash");
  }
}

// A run's training_data.json that disagrees with what its checkpoint was trained on (copied in
// from another run, say) stops eval, as it stops the report, before results are added.
TEST_F(CliResultsBelong, EvalRefusesATrainingDataRecordOtherThanTheCheckpoints) {
  ASSERT_EQ(
      lengen("data --task copy --param vocab=4 --len-min 2 --len-max 4 --train 64 --out " + at("data")).code,
      0);
  const std::string on_files = trained("on_files", " --data " + at("data"));
  const std::string generated = trained("generated");
  fs::copy_file(RunFolder(on_files).training_data_path(), RunFolder(generated).training_data_path());
  expect_refused(
      "eval " + generated + " --lengths 3", generated,
      "was trained on generated, but " + RunFolder(generated).training_data_path() + " says files ");
}

// A sweep run stopped at exactly the sweep's train.steps, but trained under other ones, cannot
// resume to them: refused up front, and so shown by the dry run. A finished run whose config.json
// and NAME.config.json were both edited by hand is named as edited after training.
TEST_F(CliResultsBelong, ASweepRefusesARunStoppedAtItsStepsUnderAnotherSchedule) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  std::ofstream(at("at3.json"))
      << R"({"base": "base.json", "set": {"train.steps": 3}, "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  const fs::path run = root_ / "out" / "a";
  for (const char* name : {"step_00000006.pt", "best.pt"}) fs::remove(run / "checkpoints" / name);
  fs::remove(run / "results.json");  // as if stopped at step 3 of 6
  ASSERT_TRUE(fs::exists(run / "checkpoints" / "step_00000003.pt"));
  const std::string refusal =
      "cannot resume: its newest checkpoint is step 3, trained under train.steps=6, not to the train.steps=3 "
      "of "
      "the sweep (set train.steps above 3, or to 6)";
  const CliResult plan = lengen("sweep " + at("at3.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(plan.out.find("a  [" + refusal + "; the sweep refuses it]"), std::string::npos) << plan.out;
  expect_one_line_refusal(plan, refusal);
  expect_one_line_refusal(lengen("sweep " + at("at3.json") + " --out " + at("out")), refusal);

  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  ASSERT_TRUE(fs::exists(run / "results.json"));
  for (const fs::path& file : {run / "config.json", root_ / "out" / "a.config.json"}) {
    nlohmann::json config = read_json_file(file.string());
    config["model"]["d_mlp"] = 64;
    std::ofstream(file) << config.dump(2);
  }
  expect_one_line_refusal(lengen("sweep " + at("sweep.json") + " --out " + at("out")),
                          "its config.json was edited after training (model.d_mlp is 64 there, 32 in " +
                              (run / "results.json").string() + "'s trained_with): restore it");
}

// A run resumed under more train.steps and stopped before its next evaluation keeps the results
// of the model trained under the old ones: the report groups and labels them by what they were
// measured on (results.json's trained_with), not by the run's config.json.
TEST_F(CliResultsBelong, AResumedRunStoppedBeforeItsEvaluationIsGroupedByItsResults) {
  fs::create_directories(at("both"));
  const std::string a = trained("both/a");
  trained("both/b", " --set train.seed=2");
  nlohmann::json config = read_json_file(RunFolder(a).config_path());
  config["train"]["steps"] = 9;  // as a `--resume --set train.steps=9` stopped at step 7 leaves it
  std::ofstream(RunFolder(a).config_path()) << config.dump(2);
  const CliResult report = lengen("report " + at("both") + " --out " + at("both_report"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = text_of(root_ / "both_report" / "report.md");
  EXPECT_EQ(md.find("train.steps=9"), std::string::npos) << md;
  EXPECT_NE(md.find("(n=2)"), std::string::npos) << md;
  // And the page says the run trained on since its results.
  EXPECT_NE(md.find("**Trained on since their results: a (results of models trained under train.steps=6; its "
                    "config.json says 9: lengen eval " +
                    a + ")"),
            std::string::npos)
      << md;
}

// A run folder inside a sweep folder that its sweep.json does not list is not one of the sweep's
// runs: the report leaves it out and names it.
TEST_F(CliResultsBelong, ARunTheSweepDoesNotListIsNamedNotDropped) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  trained("out/baseline", " --set train.seed=2");
  const CliResult report = lengen("report " + at("out") + " --out " + at("out_report"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string md = text_of(root_ / "out_report" / "report.md");
  EXPECT_NE(
      md.find("baseline (a run folder sweep.json does not list: lengen report " + at("out/baseline") + ")"),
      std::string::npos)
      << md;
}

// A log starts with its run's id: one copied in from another run is named in the report, and its
// curves are not shown as this run's.
TEST_F(CliResultsBelong, AnotherRunsLogIsNotShownAsThisRunsCurves) {
  const std::string a = trained("runs/a");
  const std::string b = trained("runs/b", " --set train.seed=2");
  EXPECT_EQ(text_of(fs::path(a) / "log.jsonl").rfind("{\"run_id\":\"" + RunFolder(a).run_id() + "\"}\n", 0),
            0u);
  ASSERT_EQ(lengen("report " + at("runs") + " --out " + at("before")).code, 0);
  EXPECT_EQ(text_of(fs::path(at("before")) / "report.md").find("Curves not shown"), std::string::npos);
  fs::copy_file(fs::path(b) / "log.jsonl", fs::path(a) / "log.jsonl", fs::copy_options::overwrite_existing);
  const CliResult report = lengen("report " + at("runs") + " --out " + at("after"));
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(text_of(fs::path(at("after")) / "report.md")
                .find("**Curves not shown: 1 run(s) whose log is not the run's own history: a (its log.jsonl "
                      "was written "
                      "by run " +
                      RunFolder(b).run_id() + ").**"),
            std::string::npos)
      << text_of(fs::path(at("after")) / "report.md");
  // A resume does not continue another run's history.
  const CliResult resume = lengen("train " + base() + " --out " + a + " --resume --set train.steps=9");
  testing::expect_one_line_refusal(resume, "log.jsonl was written by run " + RunFolder(b).run_id() +
                                               ", not the run's own history; move it aside first");
  // Nor is another run's log with its first line, the one naming its run, removed.
  {
    const std::string theirs = text_of(fs::path(b) / "log.jsonl");
    std::ofstream(fs::path(a) / "log.jsonl", std::ios::trunc) << theirs.substr(theirs.find('\n') + 1);
  }
  testing::expect_one_line_refusal(
      lengen("train " + base() + " --out " + a + " --resume --set train.steps=9"),
      "log.jsonl does not start with the line naming its run");
  ASSERT_EQ(lengen("report " + at("runs") + " --out " + at("headless")).code, 0);
  EXPECT_NE(text_of(fs::path(at("headless")) / "report.md")
                .find("a (its log.jsonl does not start with the line naming its run"),
            std::string::npos)
      << text_of(fs::path(at("headless")) / "report.md");
  // Nor are another log's lines appended to the run's own: a step logged twice is two histories.
  fs::copy_file(fs::path(b) / "log.jsonl", fs::path(a) / "log.jsonl", fs::copy_options::overwrite_existing);
  std::ofstream(fs::path(b) / "log.jsonl", std::ios::app)
      << text_of(fs::path(a) / "log.jsonl").substr(text_of(fs::path(a) / "log.jsonl").find('\n') + 1);
  ASSERT_EQ(lengen("report " + at("runs") + " --out " + at("appended")).code, 0);
  EXPECT_NE(text_of(fs::path(at("appended")) / "report.md").find("b (its log.jsonl line "), std::string::npos)
      << text_of(fs::path(at("appended")) / "report.md");
  // Nor a line of a step past the run's train.steps.
  const std::string c = trained("runs/c", " --set train.seed=3");
  std::ofstream(fs::path(c) / "log.jsonl", std::ios::app) << R"({"step": 5000, "val_exact_match": 1.0})"
                                                          << "\n";
  ASSERT_EQ(lengen("report " + at("runs") + " --out " + at("past")).code, 0);
  EXPECT_NE(text_of(fs::path(at("past")) / "report.md").find("logs step 5000, past the run's train.steps"),
            std::string::npos)
      << text_of(fs::path(at("past")) / "report.md");
}

// Greedy results record the eval.decode_cap that bounded them: runs measured under other caps
// are rows of their own, not seeds of one row.
TEST_F(CliResultsBelong, GreedyResultsUnderAnotherDecodeCapAreNotAveraged) {
  const std::string a = trained("caps/a");
  const std::string b = trained("caps/b", " --set train.seed=2");
  ASSERT_EQ(lengen("eval " + a + " --decode greedy --lengths 4").code, 0);
  const CliResult capped = lengen("eval " + b + " --decode greedy --lengths 4 --set eval.decode_cap=1.5");
  ASSERT_EQ(capped.code, 0) << capped.err;
  const nlohmann::json results = read_json_file(RunFolder(b).results_path());
  EXPECT_EQ(results["results"]["greedy"]["4"]["decode_cap"], 1.5);
  EXPECT_FALSE(results["results"]["teacher_forced"]["4"].contains("decode_cap"));
  ASSERT_EQ(lengen("report " + at("caps") + " --decode greedy --out " + at("report")).code, 0);
  const std::string md = text_of(fs::path(at("report")) / "report.md");
  EXPECT_NE(md.find("decode_cap=1.5"), std::string::npos) << md;
  EXPECT_EQ(md.find("(n=2)"), std::string::npos) << md;
  // One run's lengths decoded under two caps: its row is marked.
  ASSERT_EQ(lengen("eval " + b + " --decode greedy --lengths 6").code, 0);
  ASSERT_EQ(lengen("report " + b + " --decode greedy --out " + at("one_run")).code, 0);
  const std::string one = text_of(fs::path(at("one_run")) / "report.md");
  EXPECT_NE(
      one.find("**Mixed decode caps: run b's greedy lengths were decoded under different eval.decode_cap "
               "values (1.5 at 4; 2.2 at 6)"),
      std::string::npos)
      << one;
}

// A run is labelled by the results of the decode mode reported: greedy results of one seed do not
// split the teacher-forced row. A repeat's lengths (the same model measured elsewhere) are shown in
// the first run's row, not dropped with the repeat.
TEST_F(CliResultsBelong, RowsAreLabelledByTheDecodeReportedAndRepeatsKeepTheirLengths) {
  const std::string a = trained("d/a");
  trained("d/b", " --set train.seed=2");
  ASSERT_EQ(lengen("eval " + at("d/b") + " --decode greedy --lengths 4").code, 0);
  ASSERT_EQ(lengen("report " + at("d") + " --out " + at("teacher")).code, 0);
  const std::string teacher = text_of(fs::path(at("teacher")) / "report.md");
  EXPECT_NE(teacher.find("(n=2)"), std::string::npos) << teacher;
  EXPECT_EQ(teacher.find("decode_cap="), std::string::npos) << teacher;
  fs::copy(a, at("d/a_copy"), fs::copy_options::recursive);
  ASSERT_EQ(lengen("eval " + at("d/a_copy") + " --lengths 5").code, 0);
  ASSERT_EQ(lengen("report " + at("d") + " --out " + at("repeat")).code, 0);
  const std::string repeat = text_of(fs::path(at("repeat")) / "report.md");
  EXPECT_NE(repeat.find("a_copy (a repeat of a: same config and seeds; its lengths 5 are shown in a's row)"),
            std::string::npos)
      << repeat;
  EXPECT_NE(repeat.find(" 5 ("), std::string::npos) << repeat;
}

}  // namespace
}  // namespace lengen
