// Every JSON file is read the same way: comments allowed, problems as one line with the file,
// line and column, duplicate keys and runaway nesting refused.
#include "lengen/json_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <string>

#include "lengen/config_io.h"
#include "lengen/errors.h"
#include "lengen/sweep.h"
#include "temp_folder.h"
#include "user_error_message.h"

namespace lengen {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class JsonFileTest : public testing::TempFolderTest {
 protected:
  JsonFileTest() : TempFolderTest("lengen_json_file") {}

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (root_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
};

using testing::user_error_message;

TEST_F(JsonFileTest, SweepsAndRunFilesTakeCommentsAndReportLines) {
  write("base.json", "// the base\n{\"task\": {\"name\": \"copy\"}}\n");
  const std::string sweep = write("sweep.json",
                                  "{\n  // two seeds\n  \"base\": \"base.json\",\n"
                                  "  \"grid\": {\"train.seed\": [1, 2]} /* block */\n}\n");
  EXPECT_EQ(load_sweep(SweepSource{sweep, "", {}, {}}).runs.size(), 2u);
  const std::string broken = write("broken.json", "{\n  \"base\": \"base.json\",\n  \"grid\": {,}\n}\n");
  const std::string message = user_error_message([&] { load_sweep(SweepSource{broken, "", {}, {}}); });
  EXPECT_THAT(message, StartsWith(broken + ":3:12: invalid JSON: "));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("json.exception")));
  const std::string results = write("results.json", "{\"a\": 1, /* note */ \"b\": 2}");
  EXPECT_EQ(read_json_file(results)["b"], 2);
  EXPECT_EQ(user_error_message([&] { read_json_file(write("twice.json", "{\"a\": 1, \"a\": 2}")); }),
            (root_ / "twice.json").string() + ": duplicate key 'a'");
}

TEST_F(JsonFileTest, ADirectoryOrAMissingFileIsNamed) {
  EXPECT_EQ(user_error_message([&] { read_json_file(root_.string()); }),
            root_.string() + ": not a regular file (a directory, FIFO or device), not a JSON file");
  const std::string sweep = write("sweep.json", "{\"base\": \".\"}");
  EXPECT_THAT(user_error_message([&] { load_sweep(SweepSource{sweep, "", {}, {}}); }),
              HasSubstr("not a regular file (a directory"));
  EXPECT_EQ(user_error_message([&] { read_json_file((root_ / "none.json").string()); }),
            (root_ / "none.json").string() + ": no such JSON file");
}

// A FIFO without a writer would block the reader forever, a device like /dev/zero never ends.
TEST_F(JsonFileTest, AFifoOrADeviceIsRefusedBeforeItIsRead) {
  const std::string fifo = (root_ / "config.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(user_error_message([&] { read_json_file(fifo); }),
            fifo + ": not a regular file (a directory, FIFO or device), not a JSON file");
  EXPECT_THAT(user_error_message([&] { load_config("/dev/zero"); }),
              HasSubstr("/dev/zero: not a regular file"));
}

}  // namespace
}  // namespace lengen
