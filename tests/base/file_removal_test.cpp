// A removal that stops halfway names the file it could not remove and the files it removed.
#include "lengen/file_removal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {
namespace {

TEST(FileRemoval, AFileThatCannotGoIsNamedWithWhatWentBefore) {
  const fs::path dir = fs::temp_directory_path() / ("lengen_file_removal_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "stuck");
  std::ofstream(dir / "stuck" / "inside") << "x";  // a folder with content cannot be removed as a file
  std::ofstream(dir / "a") << "x";
  FileRemoval removal("--force");
  removal.remove(dir / "a");
  removal.remove(dir / "never_there");  // nothing to remove is no error
  std::string message;
  try {
    removal.remove(dir / "stuck");
  } catch (const UserError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("cannot remove " + (dir / "stuck").string() + ": ", 0), 0u) << message;
  EXPECT_EQ(message.substr(message.find("; ")),
            "; --force stopped there, after removing " + (dir / "a").string());
  FileRemoval first("the removal");
  try {
    first.remove(dir / "stuck");
  } catch (const UserError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("the removal stopped there, before removing anything"), std::string::npos)
      << message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lengen
