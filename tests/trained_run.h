#pragma once
// A run folder trained and evaluated once, for a suite of tests that read or damage it: the
// suite's SetUpTestSuite makes one, TearDownTestSuite deletes it with its scratch folder.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "lengen/config.h"
#include "lengen/evaluation.h"
#include "lengen/trainer.h"

namespace lengen::testing {

class TrainedRun {
 public:
  // Trains `config` into SCRATCH/run, SCRATCH being a fresh folder named `name` and the process
  // id, and evaluates its last checkpoint as `lengen train` does at the end.
  TrainedRun(const std::string& name, const Config& config)
      : scratch_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))),
        config_(config) {
    std::filesystem::remove_all(scratch_);
    std::filesystem::create_directories(scratch_);
    TrainOptions options;
    options.run_dir = run_dir();
    train(config_, options);
    evaluate_run(config_, run_dir(), "last");
  }
  ~TrainedRun() { std::filesystem::remove_all(scratch_); }
  TrainedRun(const TrainedRun&) = delete;
  TrainedRun& operator=(const TrainedRun&) = delete;

  std::filesystem::path* scratch() { return &scratch_; }
  Config* config() { return &config_; }
  std::string run_dir() const { return (scratch_ / "run").string(); }

 private:
  std::filesystem::path scratch_;
  Config config_;
};

}  // namespace lengen::testing
