// NAME.failure.txt: written when a run fails, replaced when it fails again, removed when it succeeds.
#include "lengen/failure_note.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

namespace lengen {
namespace {

TEST(FailureNote, IsReplacedByTheNextFailureAndRemovedOnSuccess) {
  const fs::path dir = fs::temp_directory_path() / ("lengen_failure_note_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "a.failure.txt").string();
  const auto text = [&] {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  write_failure_note(path, "exit code 1", "first log tail\n");
  EXPECT_EQ(text(), "exit code 1\nfirst log tail\n");
  std::ofstream(path, std::ios::app) << "a note of mine\n";
  write_failure_note(path, "exit code 2", "second");
  EXPECT_EQ(text(), "exit code 2\nsecond\n");
  remove_failure_note(path);
  EXPECT_FALSE(fs::exists(path));
  remove_failure_note(path);  // none there
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lengen
