#include "lengen/trainer.h"

#include <spdlog/fmt/fmt.h>

#include <string>

#include "lengen/errors.h"
#include "lengen/stop_signals.h"
#include "training_run.h"

namespace lengen {

void check_batch_splits_over(const TrainConfig& train, int world) {
  if (train.batch_size % world != 0) {
    throw UserError("train.batch_size (" + std::to_string(train.batch_size) + ") must be divisible by the " +
                    std::to_string(world) + " data-parallel workers");
  }
}

// The loop of phases: a step, then logging, validation, checkpoints and stopping, each when due.
TrainResult train(const Config& config, const TrainOptions& options) {
  const TrainConfig& tc = config.train;
  check_batch_splits_over(tc, options.group != nullptr ? options.group->world_size() : 1);
  TrainingRun run(config, options);
  StopSignals signals;
  TrainResult result;
  const int64_t first_step = run.first_step();
  result.steps_done = first_step;  // a finished run resumed trains no more
  for (int64_t step = first_step; step < tc.steps; ++step) {
    const StepOutcome outcome = run.step(step);
    const int64_t done = step + 1;
    if (step == first_step) result.first_loss = outcome.loss;
    result.final_loss = outcome.loss;
    run.log(done, outcome);
    const bool validate_now = (tc.eval_every > 0 && done % tc.eval_every == 0) || done == tc.steps;
    const bool checkpoint_now =
        (tc.checkpoint_every > 0 && done % tc.checkpoint_every == 0) || done == tc.steps;
    if (validate_now || checkpoint_now || outcome.stop) run.require_usable_weights(done, outcome.batch);
    if (validate_now) run.validate(done);
    if (checkpoint_now || outcome.stop) run.save(done);
    result.steps_done = done;
    if (outcome.stop) {
      run.note(fmt::format("stopped at step {}; checkpoint written", done));
      result.interrupted = true;
      break;
    }
  }
  run.finish();
  return result;
}

}  // namespace lengen
