// The figures a researcher pastes into a slide after a sweep: every report plot titled by task and
// metric, the training length marked, the legend outside the data, room
// for the y label, one colour per method in every plot; a table of some logged steps says so;
// and `lengen attention` draws the runs side by side in one figure beside its per-head maps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "cli_runner.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;
using testing::run_lengen;
using testing::text_of;

class SweepFigures : public testing::TempFolderTest {
 protected:
  SweepFigures() : TempFolderTest("lengen_sweep_figures") {}
  void SetUp() override {
    TempFolderTest::SetUp();
    std::string config = testing::tiny_copy_json(12);
    const std::string log_every = R"("log_every": 3)";
    config.replace(config.find(log_every), log_every.size(), R"("log_every": 1)");
    config_ = (root_ / "tiny.json").string();
    std::ofstream(config_) << config;
    sweep_ = root_ / "runs";
    const auto result = run_lengen(
        root_, "sweep --base " + config_ +
                   " --grid model.attention.normalizer=softmax,entmax15 --grid train.seed=1,2 --out " +
                   sweep_.string() + " --jobs 2");
    ASSERT_EQ(result.code, 0) << result.out << result.err;
  }
  // The colour each line title gets in a gnuplot script: title -> "#rrggbb".
  static std::map<std::string, std::string> colours_in(const std::string& script) {
    std::map<std::string, std::string> colours;
    const std::regex line("linecolor rgb '(#[0-9A-Fa-f]{6})' title \"([^\"]*)\"");
    for (auto it = std::sregex_iterator(script.begin(), script.end(), line); it != std::sregex_iterator();
         ++it)
      colours[(*it)[2]] = (*it)[1];
    return colours;
  }
  std::string config_;
  fs::path sweep_;
};

TEST_F(SweepFigures, ReportPlotsAreTitledMarkedAndColouredAlike) {
  const auto result = run_lengen(root_, "report " + sweep_.string());
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(text_of(sweep_ / "report.md").find("Trained by: lengen "), std::string::npos);
  const std::string exact = text_of(sweep_ / "exact_match.gp");
  const std::string title =
      "set title \"copy: exact match (%), teacher-forced, on generated data\\n"
      "bars: mean ± std over each line's runs (at most 2)\"";
  EXPECT_NE(exact.find(title), std::string::npos) << exact;
  EXPECT_NE(exact.find("set arrow 1 from 4, graph 0 to 4, graph 1 nohead"), std::string::npos) << exact;
  EXPECT_NE(exact.find("(dashed: training length 4)\""), std::string::npos) << exact;
  EXPECT_NE(exact.find("set key outside below"), std::string::npos) << exact;
  EXPECT_NE(exact.find("set lmargin"), std::string::npos) << exact;
  const std::string loss = text_of(sweep_ / "training_loss.gp");
  EXPECT_NE(loss.find("set title \"copy: training loss (log scale)\""), std::string::npos) << loss;
  EXPECT_EQ(loss.find("set arrow"), std::string::npos) << "a plot against the step marks no length";
  // A loss within one decade is read off minor grid lines: the log axis labels only decades.
  EXPECT_NE(loss.find("set logscale y 10\nset format y '%g'\nset mytics 10\nset grid mytics"), std::string::npos)
      << loss;
  // Each method one colour, the same in every plot, and two methods two colours.
  const auto in_exact = colours_in(exact);
  ASSERT_EQ(in_exact.size(), 2u) << exact;
  EXPECT_NE(in_exact.begin()->second, in_exact.rbegin()->second);
  for (const char* plot :
       {"token_accuracy.gp", "nonzero_per_query.gp", "training_loss.gp", "validation_exact_match.gp"}) {
    EXPECT_EQ(colours_in(text_of(sweep_ / plot)), in_exact) << plot;
  }
  // 12 logged steps, a table of 8 of them: said.
  EXPECT_NE(text_of(sweep_ / "report.md").find("8 of 12 logged steps shown"), std::string::npos)
      << text_of(sweep_ / "report.md");
  if (!fs::exists(sweep_ / "exact_match.png")) GTEST_SKIP() << "gnuplot did not draw (not on PATH?)";
  EXPECT_GT(fs::file_size(sweep_ / "exact_match.png"), 0u);
}

TEST_F(SweepFigures, AttentionDrawsTheRunsSideBySideInOneFigure) {
  const fs::path maps = root_ / "maps";
  const auto result = run_lengen(root_, "attention " + (sweep_ / "softmax-seed1").string() + " " +
                                            (sweep_ / "entmax15-seed1").string() +
                                            " --length 4 --heads 0,1 --out " + maps.string());
  ASSERT_EQ(result.code, 0) << result.err;
  const std::string figure = text_of(maps / "attention.gp");
  EXPECT_NE(figure.find("set multiplot layout 2,2"), std::string::npos) << figure;
  for (const char* panel : {"softmax-seed1/layer0_head1.dat", "entmax15-seed1/layer0_head0.dat"})
    EXPECT_NE(figure.find(panel), std::string::npos) << panel;
  EXPECT_TRUE(fs::exists(maps / "softmax-seed1" / "layer0_head0.gp"));  // the per-head files stay
  EXPECT_NE(text_of(maps / "attention.md").find("![](attention.png)"), std::string::npos);
  if (!fs::exists(maps / "softmax-seed1" / "layer0_head0.png"))
    GTEST_SKIP() << "gnuplot did not draw (not on PATH?)";
  EXPECT_GT(fs::file_size(maps / "attention.png"), 0u);
  EXPECT_GT(fs::file_size(maps / "attention.svg"), 0u);
}

}  // namespace
}  // namespace lengen
