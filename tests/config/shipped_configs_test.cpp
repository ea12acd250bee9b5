// Every config and sweep shipped in configs/ loads, validates and names a task that accepts its
// parameters, so a typo in a file a researcher will run fails here rather than hours into a sweep.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "lengen/config_io.h"
#include "lengen/sweep.h"
#include "lengen/task.h"

namespace lengen {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> json_files_under(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(LENGEN_SOURCE_DIR) / folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  return files;
}

bool is_sweep(const fs::path& path) { return path.parent_path().filename() == "sweeps"; }

void expect_runnable(const Config& config, const std::string& where) {
  EXPECT_NO_THROW(validate_config(config, where)) << where;
  EXPECT_NO_THROW(make_task(config.task.name, config.task.params, config.task.seed)) << where;
  EXPECT_FALSE(config.description.empty()) << where << ": shipped configs say what they are for";
}

TEST(ShippedConfigs, EveryConfigAndSweepIsValid) {
  std::set<std::string> quick_tasks;
  int sweeps = 0;
  for (const std::string folder : {"configs/quick", "configs/paper", "configs/sweeps"}) {
    for (const fs::path& path : json_files_under(folder)) {
      SCOPED_TRACE(path.string());
      if (is_sweep(path)) {
        const Sweep sweep = load_sweep(SweepSource{path.string(), "", {}, {}});
        ASSERT_FALSE(sweep.runs.empty());
        for (const SweepRun& run : sweep.runs)
          expect_runnable(run_config(sweep, run), path.string() + ":" + run.name);
        ++sweeps;
      } else {
        const Config config = load_config(path.string());
        expect_runnable(config, path.string());
        if (folder == "configs/quick") quick_tasks.insert(config.task.name);
      }
    }
  }
  EXPECT_GE(sweeps, 2);
  for (const char* task : {"copy", "reverse", "sort", "mqmtar", "flip_flop"}) {
    EXPECT_EQ(quick_tasks.count(task), 1u) << "configs/quick has no config for " << task;
  }
}

TEST(ShippedConfigs, PaperConfigsTargetAGpuInBfloat16) {
  for (const fs::path& path : json_files_under("configs/paper")) {
    if (is_sweep(path)) continue;
    const Config config = load_config(path.string());
    EXPECT_EQ(config.train.device, DeviceChoice::kCuda) << path;
    EXPECT_EQ(config.train.dtype, TrainDtype::kBfloat16) << path;
    EXPECT_EQ(config.task.len_min, 32) << path;
    EXPECT_EQ(config.task.len_max, 64) << path;
    EXPECT_GE(config.eval.lengths.back(), 4096) << path;
  }
}

}  // namespace
}  // namespace lengen
