// RUN/run.json: written by training, read by every command; an older build's .lengen_run is read
// as a record without an id.
#include "lengen/run_record.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lengen/run_folder.h"
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
  write_run_record(root_.string(), {id, data});
  const auto record = read_run_record(root_.string());
  ASSERT_TRUE(record);
  EXPECT_EQ(record->run_id, id);
  EXPECT_EQ(record->training_data, data);
  EXPECT_TRUE(RunFolder(root_.string()).is_lengen_run());
}

// A run.json of the user's own, not a run record, does not make a folder a run.
TEST_F(RunRecordTest, AUsersRunJsonIsNotARecord) {
  std::ofstream(root_ / "run.json") << R"({"experiment": "ablation 3"})";
  EXPECT_FALSE(read_run_record(root_.string()));
  EXPECT_FALSE(RunFolder(root_.string()).is_lengen_run());
}

}  // namespace
}  // namespace lengen
