#include "lengen/checkpoint.h"

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lengen/atomic_write.h"
#include "lengen/config_io.h"
#include "lengen/content_hash.h"

namespace lengen {

namespace {

std::string first_line(const c10::Error& error) {
  const std::string message = error.what_without_backtrace();
  return message.substr(0, message.find('\n'));
}

std::string shape_text(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// Every parameter and buffer by its dotted name.
std::map<std::string, torch::Tensor> named_state(Decoder& model) {
  std::map<std::string, torch::Tensor> state;
  for (const auto& item : model->named_parameters()) state[item.key()] = item.value();
  for (const auto& item : model->named_buffers()) state[item.key()] = item.value();
  return state;
}

// The dotted names of the tensors an archive of a module holds, its submodules' included.
void stored_tensor_names(torch::serialize::InputArchive& archive, const std::string& prefix,
                         std::vector<std::string>& names) {
  for (const std::string& key : archive.keys()) {
    torch::serialize::InputArchive child;
    if (archive.try_read(key, child)) {
      stored_tensor_names(child, prefix + key + ".", names);
      continue;
    }
    torch::Tensor tensor;
    if (archive.try_read(key, tensor)) names.push_back(prefix + key);
  }
}

// The model section of the config that built `model`, stored in each checkpoint: softmax and
// entmax models (or ALiBi and RoPE ones) have the same tensors, so only this tells them apart.
nlohmann::json model_section(Decoder& model) {
  Config config;
  config.model = model->config();
  return nlohmann::json{{"model", config_to_json(config)["model"]}};
}

// The evaluation's chunk size does not change what a trained model computes.
const std::vector<std::string> kKeysNotInTheModel = {"model.prefill_chunk"};

// A checkpoint written with another model section is refused, naming the first key that differs.
// Checkpoints without a stored section are compared by their tensors alone.
void check_model_section(torch::serialize::InputArchive& archive, const std::string& path, Decoder& model) {
  c10::IValue stored;
  if (!archive.try_read("model_config", stored) || !stored.isString()) return;
  const auto saved = nlohmann::json::parse(stored.toStringRef(), nullptr, /*allow_exceptions=*/false);
  if (saved.is_discarded() || !saved.is_object()) return;
  const nlohmann::json current = model_section(model);
  const std::string key = first_config_difference(saved, current, kKeysNotInTheModel);
  if (key.empty()) return;
  throw UserError("checkpoint " + path + " does not fit this model: it was trained with " + key + "=" +
                  config_value_text(saved, key) + ", this run has " + config_value_text(current, key) +
                  " (a checkpoint of another model or method, or a config.json edited after training)");
}

}  // namespace

bool weights_are_finite(Decoder& model) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, tensor] : named_state(model)) {
    if (tensor.is_floating_point() && !torch::isfinite(tensor).all().item<bool>()) return false;
  }
  return true;
}

void save_checkpoint(const std::string& path, Decoder& model, torch::optim::Optimizer* optimizer,
                     const TrainingProgress& progress) {
  if (!weights_are_finite(model))
    throw UserError("refusing to write " + path + ": the weights are not finite");
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("model_config", c10::IValue(model_section(model).dump()));
  if (!progress.run_id.empty()) archive.write("run_id", c10::IValue(progress.run_id));
  if (!progress.schedule.empty()) archive.write("schedule", c10::IValue(progress.schedule));
  archive.write("step", torch::tensor(progress.step));
  archive.write("best_validation", torch::tensor(progress.best_validation, torch::kDouble));
  archive.write("best_step", torch::tensor(progress.best_step));
  archive.write("window_loss", torch::tensor(progress.window_loss, torch::kDouble));
  archive.write("window_steps", torch::tensor(progress.window_steps));
  archive.write("window_tokens", torch::tensor(progress.window_tokens));
  // Serialized in memory, then written with the checked atomic write: a full disk ends in one
  // clear error and no temp file, not in an exception from deep inside the zip writer.
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_file_atomically(path, bytes.str());
}

namespace {

// Opens the checkpoint and reads what it says of its training (not the tensors).
TrainingProgress read_progress(const std::string& path, torch::serialize::InputArchive& archive) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw CheckpointUnreadable("checkpoint not found: " + path);
  if (!std::filesystem::is_regular_file(path, error)) {
    throw CheckpointUnreadable("checkpoint " + path + " is not a regular file (a folder, FIFO or device)");
  }
  TrainingProgress progress;
  try {
    archive.load_from(path);
    // Each into a tensor of its own: reading into a defined tensor would keep that tensor's dtype.
    const auto scalar = [&archive](const char* key) {
      torch::Tensor value;
      archive.read(key, value);
      return value;
    };
    progress.step = scalar("step").item<int64_t>();
    progress.best_validation = scalar("best_validation").item<double>();
    progress.best_step = scalar("best_step").item<int64_t>();
    progress.window_loss = scalar("window_loss").item<double>();
    progress.window_steps = scalar("window_steps").item<int64_t>();
    progress.window_tokens = scalar("window_tokens").item<int64_t>();
    for (auto [key, target] : {std::pair{"run_id", &progress.run_id}, {"schedule", &progress.schedule}}) {
      c10::IValue value;
      if (archive.try_read(key, value) && value.isString()) *target = value.toStringRef();
    }
  } catch (const c10::Error& e) {
    throw CheckpointUnreadable("checkpoint " + path + " is unreadable or truncated: " + first_line(e));
  }
  return progress;
}

}  // namespace

TrainingProgress load_checkpoint(const std::string& path, Decoder& model,
                                 torch::optim::Optimizer* optimizer) {
  torch::serialize::InputArchive archive;
  TrainingProgress progress = read_progress(path, archive);
  // A checkpoint that stores its model section is named by the first config key that differs,
  // before any tensor is compared: a key is what the user can look up and change.
  check_model_section(archive, path, model);
  // Loading replaces each tensor with the stored one whatever its shape, so the shapes are
  // compared afterwards: a checkpoint of another model must not pass for this one.
  std::map<std::string, std::vector<int64_t>> expected;
  for (const auto& [name, tensor] : named_state(model)) expected[name] = tensor.sizes().vec();
  try {
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    // Loading reads the tensors this model has and ignores the rest, so a checkpoint of another
    // method (a learned alpha, say) with every tensor of this one would pass for it.
    std::vector<std::string> stored;
    stored_tensor_names(model_archive, "", stored);
    for (const std::string& name : stored) {
      if (expected.count(name) == 0) {
        throw UserError("checkpoint " + path + " does not fit this model: it holds " + name +
                        ", which this model does not have (a checkpoint of another model or method)");
      }
    }
    model->load(model_archive);
  } catch (const c10::Error& e) {
    throw UserError("checkpoint " + path + " does not fit this model: " + first_line(e));
  }
  for (const auto& [name, tensor] : named_state(model)) {
    if (tensor.sizes().vec() != expected[name]) {
      throw UserError("checkpoint " + path + " does not fit this model: parameter " + name + " has shape " +
                      shape_text(tensor.sizes()) + " there, " + shape_text(expected[name]) +
                      " in this model");
    }
  }
  if (optimizer != nullptr) {
    try {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    } catch (const c10::Error& e) {
      throw UserError("checkpoint " + path + " has no usable optimizer state: " + first_line(e));
    }
  }
  return progress;
}

std::string weights_hash(Decoder& model) {
  ContentHash hash;
  for (const auto& [name, tensor] : named_state(model)) {
    hash.add(name);
    hash.add(shape_text(tensor.sizes()));
    const torch::Tensor values = tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
    hash.add(values.data_ptr(), static_cast<size_t>(values.numel()) * sizeof(float));
  }
  return hash.hex();
}

}  // namespace lengen
