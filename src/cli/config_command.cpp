// `lengen config show|schema`: the resolved config of a file, and every config key documented.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "lengen/config_io.h"
#include "lengen/task.h"

namespace lengen::cli {

namespace {

struct ConfigOptions {
  std::string path;
  std::vector<std::string> overrides;
  bool markdown = false;
};

}  // namespace

void add_config_command(CLI::App& app) {
  auto options = std::make_shared<ConfigOptions>();
  auto* cmd = app.add_subcommand("config", "Show a resolved config, or the schema of all config keys");
  cmd->require_subcommand(1);

  auto* show = cmd->add_subcommand("show", "Print CONFIG with defaults filled in and overrides applied");
  show->add_option("config", options->path, "Config file (JSON)")->required();
  show->add_option("--set", options->overrides, "Override one key, e.g. --set train.lr=3e-4 (repeatable)")
      ->allow_extra_args(false);
  show->callback([options] {
    std::string scaled;
    const Config config = load_config(options->path, options->overrides, &scaled);
    // Said on stderr: stdout stays the config, for a file or a pipe.
    if (!scaled.empty()) std::cerr << scaled << "\n";
    // The task's parameters are checked as training checks them: a config shown is one that runs.
    make_task(config.task.name, config.task.params, config.task.seed);
    std::cout << config_to_json(config).dump(2) << "\n";
  });

  auto* schema = cmd->add_subcommand("schema", "Print every config key with its type, default and meaning");
  schema->add_flag("--markdown", options->markdown, "print the markdown reference (docs/config.md)");
  schema->callback(
      [options] { std::cout << (options->markdown ? config_schema_markdown() : config_schema_text()); });
}

}  // namespace lengen::cli
