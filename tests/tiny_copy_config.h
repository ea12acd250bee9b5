// The smallest model and copy task the training tests use: a few hundred steps learn it on one
// core in seconds. Tests set the schedule, logging and evaluation they need on top.
#pragma once

#include "lengen/config.h"

namespace lengen::testing {

inline Config tiny_copy_config() {
  Config config;
  config.task.name = "copy";
  config.task.params = {{"vocab", 8}};
  config.task.len_min = 3;
  config.task.len_max = 6;
  config.model.layers = 2;
  config.model.d_model = 32;
  config.model.heads = 4;
  config.model.d_head = 8;
  config.model.d_mlp = 64;
  config.train.batch_size = 16;
  config.train.lr = 3e-3;
  return config;
}

}  // namespace lengen::testing
