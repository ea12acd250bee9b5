// A file that cannot be removed is named.
#include "lengen/atomic_write.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {
namespace {

TEST(FileRemoval, AFileThatCannotGoIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("lengen_file_removal_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "stuck");
  std::ofstream(dir / "stuck" / "inside") << "x";  // a folder with content cannot be removed as a file
  remove_file(dir / "never_there");                // nothing to remove is no error
  std::string message;
  try {
    remove_file(dir / "stuck");
  } catch (const UserError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("cannot remove " + (dir / "stuck").string() + ": ", 0), 0u) << message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lengen
