#pragma once
// What the trainer needs from a data-parallel process group. Single-process training uses
// no group at all; src/train/ provides one on PyTorch's c10d.
#include <torch/types.h>

#include <vector>

namespace lengen {

class DataParallel {
 public:
  virtual ~DataParallel() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Copies rank 0's tensors to every rank, in place.
  virtual void broadcast(std::vector<torch::Tensor>& tensors) = 0;
  // Sums the tensors over ranks, in place.
  virtual void all_reduce_sum(std::vector<torch::Tensor>& tensors) = 0;
};

}  // namespace lengen
