#pragma once
// `lengen attention`: one evaluation sample's attention weights per layer and head, target rows
// against all input positions, for runs side by side (DIR/attention.md); larger maps max-pooled.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lengen {

// A map reduced by the largest weight of each block of row_block x column_block cells.
struct PooledMap {
  torch::Tensor weights;  // [rows, columns], fp32
  int64_t row_block = 1;
  int64_t column_block = 1;
};

// Max-pools `map` [R, C] so that neither side exceeds `max_cells`; blocks at the edges may be
// smaller. A block holds 0 only when every weight in it is 0.
PooledMap max_pool_map(const torch::Tensor& map, int64_t max_cells);

struct AttentionMapOptions {
  int64_t length = 0;               // the evaluation length L whose sample is drawn
  int64_t sample = 0;               // index of the sample among the length's evaluation samples
  std::vector<int64_t> layers;      // empty: all
  std::vector<int64_t> heads;       // empty: all
  std::string checkpoint = "last";  // last, best or a path
  std::string out_dir;
  int64_t max_cells = 256;       // larger maps are max-pooled to at most this many cells a side
  std::string gnuplot = "auto";  // "auto": find_gnuplot(); "": data and scripts only
};

// Writes OUT/<run>/layer<l>_head<h>.{dat,gp,png,svg} and OUT/attention.md; a user error throws
// UserError before anything is written. Returns attention.md's text.
std::string write_attention_maps(const std::vector<std::string>& run_dirs,
                                 const AttentionMapOptions& options);

}  // namespace lengen
