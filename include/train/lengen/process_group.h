#pragma once
// Data-parallel process groups on c10d (TCPStore, Gloo or NCCL), configured like torchrun.
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "lengen/data_parallel.h"

namespace lengen {

// A worker died, timed out or could not be reached: every rank stops instead of waiting.
class DataParallelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Long enough for a rank that validates or checkpoints while the others wait.
constexpr std::chrono::seconds kDefaultDistTimeout{60};

struct ProcessGroupOptions {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // picks this process's GPU on a multi-GPU machine
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::milliseconds timeout = kDefaultDistTimeout;  // rendezvous and each collective
  torch::DeviceType device = torch::kCPU;  // where the training tensors live
  // What every rank must share, compared with rank 0's first; `difference` names how it differs.
  std::string agreement;
  std::function<std::string(const std::string& rank_zero, const std::string& here, int rank)> difference;
};

// Joins the group, waiting up to options.timeout for every rank. UserError when they do not
// arrive or agree, or this build cannot join.
std::unique_ptr<DataParallel> join_process_group(const ProcessGroupOptions& options);

// The options torchrun's variables describe, or nullopt when WORLD_SIZE is unset or 1.
std::optional<ProcessGroupOptions> process_group_options_from_env(torch::DeviceType device = torch::kCPU);

}  // namespace lengen
