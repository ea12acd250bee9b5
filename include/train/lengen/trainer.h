#pragma once
// `lengen train`: one config in, one run folder out (see lengen/run_folder.h).
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "lengen/config.h"
#include "lengen/data_parallel.h"

namespace lengen {

// A non-finite loss or gradient: the run stops, the last good checkpoint stays.
class TrainingDiverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TrainOptions {
  std::string run_dir;
  bool resume = false;            // continue from the latest checkpoint of run_dir
  bool force = false;             // start over in a run_dir that has content
  std::string data_dir;           // train on DIR/train.src/.trg instead of generated data
  DataParallel* group = nullptr;  // data-parallel process group, or none
  std::string start_note;         // a line said once the start is accepted (what --set scaled)
  // Called with each step's loss before backward; tests use it to inject faults.
  std::function<void(int64_t step, torch::Tensor& loss)> loss_hook;
};

struct TrainResult {
  int64_t steps_done = 0;    // the step the run stands at
  bool interrupted = false;  // stopped by SIGINT/SIGTERM after writing a checkpoint
  double final_loss = 0.0;
  double first_loss = 0.0;  // the first logged loss of this process
};

// Trains, writing config.json, log.jsonl and checkpoints into options.run_dir. Refuses a
// run_dir with content unless resume or force (UserError, nothing touched).
TrainResult train(const Config& config, const TrainOptions& options);

// UserError unless train.batch_size splits evenly over `world` workers; checked before they meet.
void check_batch_splits_over(const TrainConfig& train, int world);

}  // namespace lengen
