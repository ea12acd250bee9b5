#include "lengen/run_folder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "lengen/errors.h"

namespace fs = std::filesystem;

namespace lengen {

namespace {

constexpr const char* kStepPrefix = "step_";

}  // namespace

std::string RunFolder::checkpoint_path(int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%08lld.pt", kStepPrefix, static_cast<long long>(step));
  return checkpoint_dir() + "/" + name;
}

std::vector<std::string> RunFolder::checkpoints() const {
  std::vector<std::string> paths;
  if (!fs::is_directory(checkpoint_dir())) return paths;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStepPrefix, 0) == 0 && entry.path().extension() == ".pt") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());  // zero-padded steps sort by name
  return paths;
}

std::string RunFolder::latest_checkpoint() const {
  auto paths = checkpoints();
  return paths.empty() ? "" : paths.back();
}

void RunFolder::prune_checkpoints(int64_t keep) const {
  auto paths = checkpoints();
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 1)) < paths.size(); ++i) fs::remove(paths[i]);
}

bool RunFolder::has_content() const { return fs::exists(path_) && !fs::is_empty(path_); }

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError("cannot write " + temporary);
    out << text;
    if (!out.flush()) throw UserError("cannot write " + temporary);
  }
  fs::rename(temporary, path);
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(path + ": invalid JSON: " + e.what());
  }
}

JsonlLog::JsonlLog(const std::string& path, int64_t keep_through_step) {
  if (fs::exists(path)) {
    std::ifstream in(path);
    std::ostringstream kept;
    std::string line;
    while (std::getline(in, line)) {
      auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded()) continue;  // a line cut short by a kill
      if (record.contains("step") && record["step"].get<int64_t>() > keep_through_step) continue;
      kept << line << "\n";
    }
    write_file_atomically(path, kept.str());
  }
  out_.open(path, std::ios::app);
  if (!out_) throw UserError("cannot write " + path);
}

void JsonlLog::write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace lengen
