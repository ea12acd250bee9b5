#pragma once
// The tasks whose source is L symbols uniform over a vocabulary (copy, reverse, sort); they
// differ only in how the target follows from the source.
#include <string>

#include "lengen/task.h"

namespace lengen {

class UniformSourceTask : public Task {
 public:
  UniformSourceTask(std::string name, const TaskParams& params);

  std::string name() const override { return name_; }
  int64_t num_symbols() const override { return vocab_; }
  TaskParams params() const override { return {{"vocab", static_cast<double>(vocab_)}}; }
  Sample sample(Rng& rng, int64_t length) const override;

 protected:
  virtual Symbols target_for(const Symbols& src) const = 0;

 private:
  std::string name_;
  int64_t vocab_;
};

}  // namespace lengen
