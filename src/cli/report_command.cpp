// `lengen report DIR`: tables and plots across the runs of a sweep folder (or one run).
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "lengen/config.h"
#include "lengen/report.h"

namespace lengen::cli {

void add_report_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto options = std::make_shared<ReportOptions>();
  auto* cmd =
      app.add_subcommand("report", "Write report.md, CSV tables and plots for a sweep folder or a run");
  cmd->add_option("dir", *dir, "Sweep folder (with sweep.json), run folder, or a folder of runs")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", options->out_dir, "Where to write the report (default: DIR)");
  cmd->add_option("--decode", options->decode,
                  "teacher_forced or greedy (default: teacher_forced if present)")
      ->check(CLI::IsMember(names_of<DecodeMode>()));
  cmd->add_flag("--on-files", options->on_files,
                "Report the results on `eval --data` files instead of those on generated data");
  cmd->callback([dir, options] {
    std::cout << write_report(*dir, *options);  // stdout is report.md; where it lies goes to stderr
    std::cerr << "report written to " << (options->out_dir.empty() ? *dir : options->out_dir)
              << "/report.md, its CSV tables and plots beside it\n";
  });
}

}  // namespace lengen::cli
