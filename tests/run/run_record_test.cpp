// RUN/run.json: written by training, read by every command, naming the build and machine that
// trained the run.
#include "lengen/run_record.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "lengen/build_info.h"
#include "lengen/config.h"
#include "lengen/run_folder.h"
#include "lengen/run_start.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

class RunRecordTest : public testing::TempFolderTest {
 protected:
  RunRecordTest() : TempFolderTest("lengen_run_record") {}
};

TEST_F(RunRecordTest, ARecordReadsBackAndMakesTheFolderARun) {
  EXPECT_FALSE(read_run_record(root_.string()));
  const nlohmann::json data{{"dir", "/data/copy"}, {"hash", "0123456789abcdef"}};
  const std::string id = new_run_id();
  EXPECT_EQ(id.size(), 16u);
  write_run_record(root_.string(), {id, data, ""});
  const auto record = read_run_record(root_.string());
  ASSERT_TRUE(record);
  EXPECT_EQ(record->run_id, id);
  EXPECT_EQ(record->training_data, data);
  EXPECT_TRUE(RunFolder(root_.string()).is_lengen_run());
}

// A start names this build and CPU; a resume by the same keeps the record, one by another build
// or machine (here an older record) adds itself.
TEST_F(RunRecordTest, TheRecordNamesTheBuildsThatTrainedTheRun) {
  const RunFolder run(root_.string());
  const std::string id = write_run_start(run, Config{}, /*resume=*/false, nullptr);
  EXPECT_EQ(read_run_record(run.path())->trained_by, build_and_machine());
  EXPECT_TRUE(std::regex_match(build_and_machine(), std::regex("lengen \\S+ on .+ \\([0-9]+ cores\\)")))
      << build_and_machine();
  write_run_start(run, Config{}, /*resume=*/true, nullptr);
  EXPECT_EQ(read_run_record(run.path())->trained_by, build_and_machine());
  write_run_record(run.path(), {id, nullptr, "lengen 1234567 on Other CPU (4 cores)"});
  write_run_start(run, Config{}, /*resume=*/true, nullptr);
  write_run_start(run, Config{}, /*resume=*/true, nullptr);
  const auto record = read_run_record(run.path());
  EXPECT_EQ(record->run_id, id);
  EXPECT_EQ(record->trained_by, "lengen 1234567 on Other CPU (4 cores); resumed by " + build_and_machine());
}

// A run.json of the user's own, not a run record, does not make a folder a run.
TEST_F(RunRecordTest, AUsersRunJsonIsNotARecord) {
  std::ofstream(root_ / "run.json") << R"({"experiment": "ablation 3"})";
  EXPECT_FALSE(read_run_record(root_.string()));
  EXPECT_FALSE(RunFolder(root_.string()).is_lengen_run());
}

}  // namespace
}  // namespace lengen
