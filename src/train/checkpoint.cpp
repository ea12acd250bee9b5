#include "lengen/checkpoint.h"

#include <torch/torch.h>

#include <filesystem>

#include "lengen/errors.h"

namespace lengen {

void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("step", torch::tensor(progress.step));
  archive.write("best_validation", torch::tensor(progress.best_validation, torch::kDouble));
  archive.write("best_step", torch::tensor(progress.best_step));
  const std::string temporary = path + ".tmp";
  archive.save_to(temporary);
  std::filesystem::rename(temporary, path);
}

TrainingProgress load_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer) {
  if (!std::filesystem::exists(path)) throw UserError("checkpoint not found: " + path);
  TrainingProgress progress;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model->load(model_archive);
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    }
    torch::Tensor value;
    archive.read("step", value);
    progress.step = value.item<int64_t>();
    archive.read("best_validation", value);
    progress.best_validation = value.item<double>();
    archive.read("best_step", value);
    progress.best_step = value.item<int64_t>();
  } catch (const c10::Error& e) {
    std::string message = e.what_without_backtrace();
    throw UserError("checkpoint " + path + " does not fit this model: " + message.substr(0, message.find('\n')));
  }
  return progress;
}

}  // namespace lengen
