#pragma once
// A fresh folder per test under the system temp dir, named after the process and the test, and
// removed afterwards: tests that write run folders use it so parallel shards never collide.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace lengen::testing {

class TempFolderTest : public ::testing::Test {
 protected:
  explicit TempFolderTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            (prefix_ + "_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string prefix_;
  std::filesystem::path root_;
};

}  // namespace lengen::testing
