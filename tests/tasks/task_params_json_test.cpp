// Integer task parameters read as integers wherever lengen data shows them: data.json holds
// "vocab": 32, not 32.0, and so do the messages that quote it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "lengen/data_record.h"
#include "lengen/json_file.h"
#include "temp_folder.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

TEST(TaskParamsJson, WholeNumbersAreIntegers) {
  const nlohmann::json json = task_params_json({{"vocab", 32.0}, {"p", 0.25}, {"big", 1e300}});
  EXPECT_EQ(json.dump(), R"({"big":1e+300,"p":0.25,"vocab":32})");
  EXPECT_TRUE(json["vocab"].is_number_integer());
}

class DataCliParams : public testing::TempFolderTest {
 protected:
  DataCliParams() : TempFolderTest("lengen_data_params") {}
};

TEST_F(DataCliParams, DataRecordAndMessagesShowIntegerParameters) {
  const std::string out = (root_ / "d").string();
  auto result = testing::run_lengen(
      root_, "data --task copy --param vocab=32 --seed 1 --train 4 --len-min 2 --len-max 4 --out " + out);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("copy vocab=32,"), std::string::npos) << result.out;
  const nlohmann::json record = read_json_file(out + "/data.json");
  EXPECT_TRUE(record["params"]["vocab"].is_number_integer()) << record.dump();
  EXPECT_EQ(testing::text_of(out + "/data.json").find("32.0"), std::string::npos);
}

}  // namespace
}  // namespace lengen
