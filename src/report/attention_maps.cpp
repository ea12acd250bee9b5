// `lengen attention`: one evaluation sample's attention maps per run, layer and head, drawn with
// gnuplot next to their data and scripts, and a page that puts the runs side by side.
#include "lengen/attention_maps.h"

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/attention_capture.h"
#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/device.h"
#include "lengen/errors.h"
#include "lengen/evaluation.h"
#include "lengen/memory_estimate.h"
#include "lengen/output_files.h"
#include "lengen/report.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace lengen {

PooledMap max_pool_map(const torch::Tensor& map, int64_t max_cells) {
  PooledMap pooled;
  const int64_t rows = map.size(0), columns = map.size(1);
  pooled.row_block = std::max<int64_t>(1, (rows + max_cells - 1) / max_cells);
  pooled.column_block = std::max<int64_t>(1, (columns + max_cells - 1) / max_cells);
  auto weights = map.to(torch::kFloat).unsqueeze(0);
  if (pooled.row_block > 1 || pooled.column_block > 1) {
    // ceil_mode keeps the partial blocks at the edges; weights are >= 0 and the padding -inf.
    weights = torch::max_pool2d(weights, {pooled.row_block, pooled.column_block},
                                {pooled.row_block, pooled.column_block}, {0, 0}, {1, 1}, /*ceil_mode=*/true);
  }
  pooled.weights = weights.squeeze(0).contiguous();
  return pooled;
}

namespace {

// Weights below this share the palette's lowest colour; 0 itself stays white.
constexpr double kLowestColouredWeight = 1e-4;

struct RunMaps {
  std::string name;
  std::string task;
  std::string folder;      // the run folder, absolute: names of runs from different sweeps repeat
  std::string label;       // the method's label
  std::string checkpoint;  // file name
  int64_t step = 0;
  Sample sample;
  std::vector<torch::Tensor> layers;  // [H, |trg|, T] per layer
};

// The layers or heads asked for, each once in the order asked; all of them when none is.
std::vector<int64_t> chosen(std::vector<int64_t> asked, int64_t count, const char* what) {
  if (asked.empty()) {
    asked.resize(static_cast<size_t>(count));
    std::iota(asked.begin(), asked.end(), 0);
  }
  std::vector<int64_t> once;
  for (int64_t index : asked) {
    if (index < 0 || index >= count) {
      throw UserError(fmt::format("--{} {} is out of range: the model has {} {} (0..{})", what, index, count,
                                  what, count - 1));
    }
    if (std::find(once.begin(), once.end(), index) == once.end()) once.push_back(index);
  }
  return once;
}

RunMaps capture_run(const std::string& run_dir, const AttentionMapOptions& options) {
  const std::string config_path = RunFolder(run_dir).config_path();
  Config config = load_config(config_path);
  const int64_t samples = samples_at_length(config.eval, options.length);
  if (options.sample >= samples) {
    throw UserError(fmt::format("--sample {} is out of range: {} evaluates {} samples at this length (0..{})",
                                options.sample, config_path, samples, samples - 1));
  }
  // The sample is the evaluation's own: sample I of length L's fixed evaluation samples. A length
  // too long to draw is refused below, by the memory the maps need.
  config.eval.lengths = {options.length};
  config.eval.samples = options.sample + 1;
  config.eval.long_from = config.eval.long_samples = 0;
  const auto task = make_task(config.task.name, config.task.params, config.task.seed);
  if (options.length < task->min_length()) {
    throw UserError(fmt::format("--length {} is below {}'s shortest length {}", options.length,
                                config.task.name, task->min_length()));
  }
  RunMaps maps;
  maps.task = config.task.name;
  maps.label = method_label(
      {config.model.attention.normalizer, config.model.attention.scaling, config.model.attention.positions});
  maps.sample = evaluation_sets(*task, config, "").front().samples.back();
  // The maps hold each layer's and head's weights at every target row over the whole sample.
  const double tokens = static_cast<double>(maps.sample.src.size() + maps.sample.trg.size() + 2);
  MemoryEstimate needed = forward_memory(config.model, vocab_size(task->num_symbols()), tokens);
  needed.attention += static_cast<double>(config.model.layers * config.model.heads) *
                      static_cast<double>(maps.sample.trg.size()) * tokens * 4.0;
  check_fits_in_memory(needed,
                       fmt::format("--length {} ({} target rows of {} tokens)", options.length,
                                   maps.sample.trg.size(), tokens),
                       "the attention maps of one sample", "lower --length");
  Decoder model(config.model, vocab_size(task->num_symbols()));
  const std::string checkpoint = resolve_checkpoint(run_dir, options.checkpoint);
  const TrainingProgress progress = load_checkpoint(checkpoint, model, nullptr);
  check_checkpoint_belongs(checkpoint, progress, RunFolder(run_dir));
  maps.step = progress.step;
  maps.checkpoint = fs::path(checkpoint).filename().string();
  model->to(resolve_device(config.train.device));
  model->set_query_chunk(config.model.prefill_chunk);
  maps.layers = target_attention(model, maps.sample);
  return maps;
}

// The data file: comment lines, then one line per (pooled) target row, one weight per (pooled)
// key block; gnuplot reads it as a matrix.
std::string map_data(const RunMaps& run, const PooledMap& pooled, int64_t layer, int64_t head,
                     const AttentionMapOptions& options) {
  std::ostringstream out;
  out << fmt::format("# lengen attention: run {}, {} (step {}), sample {} of length {}, layer {} head {}\n",
                     run.name, run.checkpoint, run.step, options.sample, options.length, layer, head);
  out << fmt::format(
      "# rows: target symbols 0..{} (blocks of {}); columns: input positions 0..{} (blocks of {}); "
      "a pooled cell holds its block's largest weight\n",
      run.sample.trg.size() - 1, pooled.row_block, run.layers[0].size(2) - 1, pooled.column_block);
  const auto weights = pooled.weights.contiguous();
  const auto cells = weights.accessor<float, 2>();
  for (int64_t r = 0; r < weights.size(0); ++r) {
    for (int64_t c = 0; c < weights.size(1); ++c) out << (c ? " " : "") << fmt::format("{:.7g}", cells[r][c]);
    out << "\n";
  }
  return out.str();
}

// One map of a figure: its data file (relative to the figure's folder), title and pooling.
struct FigurePanel {
  std::string data, title;
  PooledMap pooled;
};

// The gnuplot script of NAME.png and NAME.svg: `panels[row][column]` under `heading`, with one
// colour scale (log, from kLowestColouredWeight to 1; 0 stays white).
std::string figure_script(const std::string& name, const std::string& heading,
                          const std::vector<std::vector<FigurePanel>>& panels, const std::string& y_label,
                          const std::string& terminal) {
  const size_t columns = panels.front().size();
  const std::string size = fmt::format("{},{}", 120 + 420 * columns, 70 + 380 * panels.size());
  std::ostringstream body;
  body << "set logscale cb\nset cbrange [" << kLowestColouredWeight << ":1]\nset format cb '%.0e'\n"
       << "set cblabel 'attention weight (white: exactly 0)' offset 2,0\n"
       << "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n"
       << "set tics out\nset border linecolor 'gray40'\n"
       << "set xlabel 'key: input position'\nset ylabel " << gnuplot_quoted(y_label) << "\n"
       << "set multiplot layout " << panels.size() << "," << columns << " title " << gnuplot_quoted(heading)
       << "\n";
  for (const auto& row : panels) {
    for (size_t c = 0; c < row.size(); ++c) {
      const FigurePanel& panel = row[c];
      const PooledMap& pooled = panel.pooled;
      const auto row_block = static_cast<double>(pooled.row_block);
      const auto column_block = static_cast<double>(pooled.column_block);
      // One colour scale for the figure: beside the last column only, with room for its tic labels.
      body << (c + 1 == row.size() ? "set colorbox\nset rmargin 14\n" : "unset colorbox\nset rmargin 3\n")
           << "set title " << gnuplot_quoted(panel.title) << "\n"
           << fmt::format("set xrange [{}:{}]\n", -0.5 * column_block,
                          (static_cast<double>(pooled.weights.size(1)) - 0.5) * column_block)
           << fmt::format("set yrange [{}:{}]\n",
                          (static_cast<double>(pooled.weights.size(0)) - 0.5) * row_block, -0.5 * row_block)
           << fmt::format(
                  "plot {} matrix using ($1*{}):($2*{}):($3 > 0 ? ($3 < {} ? {} : $3) : NaN) with image "
                  "notitle\n",
                  gnuplot_quoted(panel.data), pooled.column_block, pooled.row_block, kLowestColouredWeight,
                  kLowestColouredWeight);
    }
  }
  body << "unset multiplot\n";
  return "# Attention weights: target rows against input positions; run `gnuplot " + name +
         ".gp` in this folder.\nset terminal " + terminal + " noenhanced size " + size + "\nset output '" +
         name + ".png'\n" + body.str() + "set terminal svg noenhanced name '" + name + "' size " + size +
         "\nset output '" + name + ".svg'\n" + body.str();
}

// Each run's name in OUT: the last component of its path made absolute (so that "." and ".."
// name the folder they stand for), with a suffix where runs of different sweeps share a name.
std::vector<std::string> unique_run_names(const std::vector<std::string>& run_dirs) {
  std::vector<std::string> names;
  for (const std::string& run_dir : run_dirs) {
    fs::path path = fs::absolute(run_dir).lexically_normal();
    if (path.filename().empty()) path = path.parent_path();  // a trailing slash
    const std::string name = path.filename().empty() ? "root" : path.filename().string();
    std::string unique = name;
    for (int k = 2; std::find(names.begin(), names.end(), unique) != names.end(); ++k)
      unique = name + "_" + std::to_string(k);
    names.push_back(unique);
  }
  return names;
}

// Text for a cell of a Markdown table: a '|' would start another cell, and '<' '>' would end a
// link destination.
std::string table_cell(const std::string& text) {
  std::string cell;
  for (const char c : text) {
    if (c == '|' || c == '<' || c == '>') cell += '\\';
    cell += c;
  }
  return cell;
}

// The runs side by side in one figure: OUT/attention.{gp,png,svg}.
constexpr const char* kFigureName = "attention";

// Each run's maps (OUT/NAME/layerL_headH.*) and all of them in OUT/attention.*; returns whether
// gnuplot drew every one.
bool draw_maps(const std::vector<RunMaps>& runs, const std::vector<int64_t>& layers,
               const std::vector<int64_t>& heads, const AttentionMapOptions& options,
               const std::string& gnuplot, const std::string& terminal) {
  bool drawn = !gnuplot.empty();
  std::set<std::string> tasks;
  for (const RunMaps& run : runs) tasks.insert(run.task);
  const std::string heading = fmt::format("Attention maps of {}: sample {} of length {}",
                                          fmt::join(tasks, " + "), options.sample, options.length);
  const std::string y_label = runs.front().sample.framing == Framing::kLabelPerPosition
                                  ? "query: source symbol (predicting its label)"
                                  : "query: target symbol";
  std::vector<std::vector<FigurePanel>> panels(layers.size() * heads.size(),
                                               std::vector<FigurePanel>(runs.size()));
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunMaps& run = runs[r];
    const std::string dir = options.out_dir + "/" + run.name;
    fs::create_directories(dir);
    // Seeds of one method are told apart by the run's name.
    const bool shared = std::count_if(runs.begin(), runs.end(),
                                      [&](const RunMaps& other) { return other.label == run.label; }) > 1;
    size_t row = 0;
    for (int64_t layer : layers) {
      for (int64_t head : heads) {
        const std::string name = fmt::format("layer{}_head{}", layer, head);
        FigurePanel panel{name + ".dat", fmt::format("{}\nlayer {} head {}", run.label, layer, head),
                          max_pool_map(run.layers[static_cast<size_t>(layer)][head], options.max_cells)};
        write_file_atomically(dir + "/" + name + ".dat", map_data(run, panel.pooled, layer, head, options));
        write_file_atomically(dir + "/" + name + ".gp",
                              figure_script(name, heading, {{panel}}, y_label, terminal));
        if (!gnuplot.empty()) drawn = run_gnuplot(gnuplot, dir, name) && drawn;
        panel.data = run.name + "/" + panel.data;
        panel.title =
            fmt::format("{}\n{}layer {} head {}", run.label, shared ? run.name + ", " : "", layer, head);
        panels[row++][r] = panel;
      }
    }
  }
  write_file_atomically(options.out_dir + "/" + kFigureName + ".gp",
                        figure_script(kFigureName, heading, panels, y_label, terminal));
  if (!gnuplot.empty()) drawn = run_gnuplot(gnuplot, options.out_dir, kFigureName) && drawn;
  return drawn;
}

// attention.md: what the maps show, notes on the runs, and a table of the maps.
std::string attention_page(const std::vector<RunMaps>& runs, const std::vector<int64_t>& layers,
                           const std::vector<int64_t>& heads, const AttentionMapOptions& options,
                           bool all_drawn, const std::string& gnuplot) {
  const RunMaps& first = runs.front();
  // Every map of one length is pooled alike.
  const PooledMap example = max_pool_map(first.layers[0][0], options.max_cells);
  std::ostringstream md;
  md << "# Attention maps: sample " << options.sample << " of length " << options.length << "\n\n"
     << "Each map shows one head's attention weights at the queries that predict the target symbols (rows, "
        "top to "
        "bottom) against every input position (columns: BOS, the "
     << first.sample.src.size() << " source symbols, SEP, the " << first.sample.trg.size()
     << " target symbols). White cells are exactly 0; coloured cells are nonzero, on a log scale from "
     << kLowestColouredWeight
     << " (and below) to 1. Positions after a query are in its future and always 0.\n\n";
  if (example.row_block > 1 || example.column_block > 1) {
    md << fmt::format(
        "The maps are max-pooled to be readable: each cell is the largest weight of a block of {} "
        "target rows x {} input positions ({} x {} weights per head shown as {} x {}).\n\n",
        example.row_block, example.column_block, first.layers[0].size(1), first.layers[0].size(2),
        example.weights.size(0), example.weights.size(1));
  }
  bool same_sample = true;
  // Another task may read the same source and answer it otherwise (copy, sort): targets count too.
  for (const RunMaps& run : runs)
    same_sample = same_sample && run.sample.src == first.sample.src && run.sample.trg == first.sample.trg;
  if (!same_sample)
    md << "The runs' samples differ (different tasks or task seeds): each map shows its own run's.\n\n";
  md << "Runs:";
  for (size_t i = 0; i < runs.size(); ++i)
    md << (i ? ";" : "") << " `" << runs[i].name << "` is " << runs[i].folder;
  md << ".\n\n| layer / head |";
  for (const RunMaps& run : runs)
    md << " " << table_cell(run.name + ": " + run.label) << " (" << run.checkpoint << ", step " << run.step
       << ") |";
  md << "\n|---|";
  for (size_t i = 0; i < runs.size(); ++i) md << "---|";
  md << "\n";
  for (int64_t layer : layers) {
    for (int64_t head : heads) {
      md << "| " << layer << " / " << head << " |";
      for (const RunMaps& run : runs)
        md << fmt::format(" ![](<{}/layer{}_head{}.png>) |", table_cell(run.name), layer, head);
      md << "\n";
    }
  }
  md << "\nAll of them in one figure, the runs side by side: ![](" << kFigureName << ".png) (also "
     << kFigureName << ".svg).\n";
  if (!all_drawn) {
    md << "\nSome maps were not drawn (" << (gnuplot.empty() ? "gnuplot is not on PATH" : "gnuplot failed")
       << "); the data (*.dat) and scripts (*.gp) are written: run `gnuplot NAME.gp` in a run's folder.\n";
  }
  return md.str();
}

}  // namespace

std::string write_attention_maps(const std::vector<std::string>& run_dirs,
                                 const AttentionMapOptions& options) {
  if (options.max_cells < 8) throw UserError(fmt::format("--max-cells {} is below 8", options.max_cells));
  // The path first (a file there, the root); the folder's list is read holding its lock.
  check_output_folder_path(options.out_dir);
  const std::vector<std::string> names = unique_run_names(run_dirs);
  std::vector<RunMaps> runs;
  for (size_t i = 0; i < run_dirs.size(); ++i) {
    runs.push_back(capture_run(run_dirs[i], options));
    runs.back().name = names[i];
    runs.back().folder = fs::absolute(run_dirs[i]).lexically_normal().string();
  }
  const int64_t layer_count = static_cast<int64_t>(runs.front().layers.size());
  const int64_t head_count = runs.front().layers.front().size(0);
  for (const RunMaps& run : runs) {
    if (static_cast<int64_t>(run.layers.size()) != layer_count || run.layers.front().size(0) != head_count) {
      throw UserError(
          fmt::format("run {} has {} layers of {} heads, run {} {} of {}: lengen attention compares runs "
                      "of one shape",
                      runs.front().name, layer_count, head_count, run.name, run.layers.size(),
                      run.layers.front().size(0)));
    }
  }
  const auto layers = chosen(options.layers, layer_count, "layers");
  const auto heads = chosen(options.heads, head_count, "heads");

  const std::string gnuplot = options.gnuplot == "auto" ? find_gnuplot() : options.gnuplot;
  const std::string terminal = gnuplot.empty() ? "pngcairo" : png_terminal(gnuplot);
  // Every file this page writes is checked before the first is written.
  std::vector<std::string> files = {"attention.md"};
  for (const char* extension : {".gp", ".png", ".svg"}) files.push_back(std::string(kFigureName) + extension);
  for (const RunMaps& run : runs) {
    for (int64_t layer : layers) {
      for (int64_t head : heads) {
        for (const char* extension : {".dat", ".gp", ".png", ".svg"})
          files.push_back(fmt::format("{}/layer{}_head{}{}", run.name, layer, head, extension));
      }
    }
  }
  // One page at a time in OUT, and none of an earlier page's maps left beside this one's.
  const auto writing = lock_output_folder(options.out_dir);
  check_output_files(options.out_dir, files);
  remove_listed_output_files(options.out_dir, [](const std::string& name) {
    return name.rfind("attention.", 0) == 0 || name.find('/') != std::string::npos;
  });
  claim_output_files(options.out_dir, files);
  const bool drawn = draw_maps(runs, layers, heads, options, gnuplot, terminal);
  const std::string md = attention_page(runs, layers, heads, options, drawn, gnuplot);
  write_file_atomically(options.out_dir + "/attention.md", md);  // claimed above
  return md;
}

}  // namespace lengen
