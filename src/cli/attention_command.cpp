// `lengen attention RUN [RUN2 ...] --length L --out DIR`: heatmaps of one evaluation sample's
// attention weights, per layer and head, with the runs side by side in DIR/attention.md.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "count_validators.h"
#include "lengen/attention_maps.h"

namespace lengen::cli {

void add_attention_command(CLI::App& app) {
  auto runs = std::make_shared<std::vector<std::string>>();
  auto options = std::make_shared<AttentionMapOptions>();
  auto* cmd = app.add_subcommand("attention",
                                 "Draw one evaluation sample's attention maps (target rows against all input "
                                 "positions) per layer and head, "
                                 "for several runs side by side in DIR/attention.md");
  cmd->add_option("runs", *runs, "Run folders (each holds config.json and checkpoints/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--length", options->length, "Evaluation length L whose sample is drawn, e.g. 16 or 128")
      ->required()
      ->check(positive_count());
  cmd->add_option("--sample", options->sample, "Which of the length's evaluation samples (default 0)")
      ->check(non_negative_count());
  add_count_list_option(cmd, "--layers", options->layers, "Layers to draw, e.g. 0,1 (default: all)",
                        non_negative_count());
  add_count_list_option(cmd, "--heads", options->heads, "Heads to draw, e.g. 0,2 (default: all)",
                        non_negative_count());
  cmd->add_option("--checkpoint", options->checkpoint, "last, best or a checkpoint path (default: last)");
  cmd->add_option("--max-cells", options->max_cells,
                  "Maps with more rows or columns are max-pooled to at most this many (default 256)");
  cmd->add_option("--out", options->out_dir, "Folder for attention.md and the maps")->required();
  cmd->callback([runs, options] { std::cout << write_attention_maps(*runs, *options); });
}

}  // namespace lengen::cli
