// What a run's results.json holds and how the report groups it: results per data folder, runs
// grouped by the training their results record; a sweep never trains over an evaluated run whose
// step checkpoints were deleted.
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

// One model evaluated on two data folders (its own test files and another generator's) keeps the
// results on both, each shown as its own rows; a folder whose files changed is measured anew,
// its old results dropped rather than mixed with the new.
TEST_F(CliResultsBelong, ResultsOnTwoDataFoldersAreKeptApart) {
  const std::string a = trained("a");
  const auto write_split = [&](const std::string& folder, const std::string& name, const std::string& line) {
    fs::create_directories(at(folder));
    std::ofstream(at(folder) + "/" + name + ".src") << line << "\n";
    std::ofstream(at(folder) + "/" + name + ".trg") << line << "\n";
  };
  write_split("one", "test_0_4", "1 2 3 0");
  write_split("one", "test_1_3", "1 2 3");
  write_split("two", "test_0_4", "3 2 1 0");
  const CliResult first = lengen("eval " + a + " --data " + at("one"));
  ASSERT_EQ(first.code, 0) << first.err;
  // Files without lengen data's record are read as the task's samples, and the log says so.
  EXPECT_NE(first.out.find("has no data.json (lengen data writes one): its files are read as copy samples"),
            std::string::npos)
      << first.out;
  ASSERT_EQ(lengen("eval " + a + " --data " + at("two")).code, 0);
  // The same folder typed with a trailing slash, or through a link, is the same folder.
  fs::create_directory_symlink(at("one"), at("link_to_one"));
  ASSERT_EQ(lengen("eval " + a + " --data " + at("one") + "/").code, 0);
  ASSERT_EQ(lengen("eval " + a + " --data " + at("link_to_one")).code, 0);
  nlohmann::json on_files = read_json_file(RunFolder(a).results_path()).at("results_on_files");
  ASSERT_EQ(on_files.size(), 2u) << on_files.dump();
  EXPECT_EQ(on_files.at(at("one")).at("teacher_forced").size(), 2u);
  EXPECT_EQ(on_files.at(at("two")).at("teacher_forced").size(), 1u);
  const CliResult report = lengen("report " + a + " --on-files --out " + at("report"));
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string page = text_of(at("report") + "/report.md");
  EXPECT_NE(page.find("test_data=" + at("one")), std::string::npos) << page;
  EXPECT_NE(page.find("test_data=" + at("two")), std::string::npos) << page;

  // test_1_3 rewritten: its old result is dropped with a line, and what is there now is measured.
  write_split("one", "test_1_3", "3 3 3");
  write_split("one", "test_0_4", "1 2 3 0");
  const std::string hash_before =
      on_files.at(at("one")).at("teacher_forced").at("3").at("data").at("files").at(0).at("hash");
  const CliResult again = lengen("eval " + a + " --data " + at("one"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("changed since"), std::string::npos) << again.out;
  on_files = read_json_file(RunFolder(a).results_path()).at("results_on_files");
  EXPECT_NE(on_files.at(at("one")).at("teacher_forced").at("3").at("data").at("files").at(0).at("hash"),
            hash_before);
  EXPECT_EQ(on_files.at(at("two")).at("teacher_forced").size(), 1u);  // the other folder untouched
}

// A sweep run whose step checkpoints were deleted to save space (as the runs kept under results/)
// counts as finished: skipped, not trained anew over its results.json.
TEST_F(CliResultsBelong, ASweepSkipsAnEvaluatedRunWithoutCheckpoints) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  const fs::path run = root_ / "out" / "a";
  for (const auto& entry : fs::directory_iterator(run / "checkpoints")) {
    if (entry.path().filename().string().rfind("step_", 0) == 0) fs::remove(entry.path());
  }
  const std::string results = text_of(run / "results.json");
  const CliResult plan = lengen("sweep " + at("sweep.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(plan.out.find("a  [finished]"), std::string::npos) << plan.out;
  const CliResult rerun = lengen("sweep " + at("sweep.json") + " --out " + at("out"));
  EXPECT_EQ(rerun.code, 0) << rerun.out << rerun.err;
  EXPECT_NE(rerun.out.find("skip a (finished)"), std::string::npos) << rerun.out;
  EXPECT_EQ(text_of(run / "results.json"), results);
}

// A run left to resume under fewer train.steps than it trained is not resumed: its resume refuses,
// and the sweep records why, leaving the run as it was.
TEST_F(CliResultsBelong, ASweepDoesNotShortenARun) {
  std::ofstream(at("sweep.json")) << R"({"base": "base.json", "list": [{"name": "a"}]})";
  std::ofstream(at("shorter.json"))
      << R"({"base": "base.json", "set": {"train.steps": 3}, "list": [{"name": "a"}]})";
  ASSERT_EQ(lengen("sweep " + at("sweep.json") + " --out " + at("out")).code, 0);
  const fs::path run = root_ / "out" / "a";
  fs::remove(run / "results.json");  // as if stopped before its evaluation
  const std::string log = text_of(run / "log.jsonl");
  const CliResult plan = lengen("sweep " + at("shorter.json") + " --out " + at("out") + " --dry-run");
  EXPECT_NE(plan.out.find("a  [resume]"), std::string::npos) << plan.out;
  EXPECT_EQ(lengen("sweep " + at("shorter.json") + " --out " + at("out")).code, 1);
  EXPECT_NE(text_of(root_ / "out" / "a.failure.txt").find("it has trained 6 steps already"),
            std::string::npos);
  EXPECT_EQ(text_of(run / "log.jsonl"), log);
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
  // One run's lengths decoded under two caps: the page names both.
  ASSERT_EQ(lengen("eval " + b + " --decode greedy --lengths 6").code, 0);
  ASSERT_EQ(lengen("report " + b + " --decode greedy --out " + at("one_run")).code, 0);
  const std::string one = text_of(fs::path(at("one_run")) / "report.md");
  EXPECT_NE(one.find("decode: greedy (at most 1.5 or 2.2x the source length, eval.decode_cap)"),
            std::string::npos)
      << one;
}

// A run is labelled by the results of the decode mode reported: greedy results of one seed do not
// split the teacher-forced row. A copy of a run is a repeat, named and not counted as a seed.
TEST_F(CliResultsBelong, RowsAreLabelledByTheDecodeReportedAndARepeatIsNamed) {
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
  EXPECT_NE(repeat.find("a_copy (a repeat of a: same config and seeds)"), std::string::npos) << repeat;
}

}  // namespace
}  // namespace lengen
