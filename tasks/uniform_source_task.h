#pragma once
// The tasks whose source is L symbols uniform over a vocabulary (copy, reverse, sort); they
// differ only in how the target follows from the source.
#include <string>
#include <vector>

#include "lengen/task.h"
#include "task_params.h"

namespace lengen {

// Their one parameter, `vocab`.
std::vector<TaskParameter> uniform_source_parameters();

class UniformSourceTask : public Task {
 public:
  UniformSourceTask(std::string name, const CheckedParams& params);

  std::string name() const override { return name_; }
  int64_t num_symbols() const override { return vocab_; }
  TaskParams params() const override { return params_; }
  Sample sample(Rng& rng, int64_t length) const override;

 protected:
  virtual Symbols target_for(const Symbols& src) const = 0;

 private:
  std::string name_;
  TaskParams params_;
  int64_t vocab_;
};

}  // namespace lengen
