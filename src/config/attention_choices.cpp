// The one table of each attention axis. Normalizers and positions are listed in normalizer_list.h
// and position_list.h; adding a scaling adds one entry here and its kind (length_scaling.cpp).
#include "lengen/attention_choices.h"

namespace lengen {

// The parameters of a normalizer_list.h line, "(a, b)", as the items of a braced list.
#define LENGEN_LIST_ITEMS(...) __VA_ARGS__

const std::vector<NormalizerChoice>& normalizer_choices() {
  static const std::vector<NormalizerChoice> choices = {
#define LENGEN_NORMALIZER(name, help, parameters, label) \
  {#name, help, std::vector<std::string>{LENGEN_LIST_ITEMS parameters}, label},
#include "lengen/normalizer_list.h"
#undef LENGEN_NORMALIZER
  };
  return choices;
}

const std::vector<ScalingChoice>& scaling_choices() {
  static const std::vector<ScalingChoice> choices = {
      {{"none", "queries as they are", {}, ScalingKind::kNone}, {}, FusedTerm::kNone},
      {{"ssmax", "s_h * log length (Scalable-Softmax)", {}, ScalingKind::kSsmax},
       {{"softmax", "SSMax"}},
       FusedTerm::kQueryFactor},
      {{"learned",
        "delta + beta_h * (log length)^gamma_h, per head",
        {"scaling_delta"},
        ScalingKind::kLearned},
       {},
       FusedTerm::kQueryFactor},
      {{"asentmax",
        "delta + beta * (log length)^gamma, beta and gamma projected from each query's input",
        {"scaling_delta", "scaling_gamma_range", "scaling_bias", "scaling_init_std"},
        ScalingKind::kAsentmax},
       {{"entmax15", "ASEntmax"}},
       FusedTerm::kQueryFactor},
  };
  return choices;
}

const std::vector<PositionChoice>& position_choices() {
  static const std::vector<PositionChoice> choices = {
#define LENGEN_POSITION(name, help, parameters, fused) \
  {#name, help, std::vector<std::string>{LENGEN_LIST_ITEMS parameters}, FusedTerm::fused},
#include "lengen/position_list.h"
#undef LENGEN_POSITION
  };
  return choices;
}

std::vector<std::string> normalizer_names() { return entry_names(normalizer_choices()); }
std::vector<std::string> scaling_names() { return entry_names(scaling_choices()); }
std::vector<std::string> position_names() { return entry_names(position_choices()); }

std::vector<std::string> normalizers_reading(const std::string& parameter) {
  return names_reading(normalizer_choices(), parameter);
}

const ScalingChoice& scaling_choice(const std::string& name) {
  return entry_named(scaling_choices(), "scaling", name);
}

const PositionChoice& position_choice(const std::string& name) {
  return entry_named(position_choices(), "positions", name);
}

ScalingKind scaling_kind(const std::string& name) { return scaling_choice(name).kind; }

std::string method_common_name(const std::string& normalizer, const std::string& scaling) {
  const ScalingChoice* scaling_choice = find_entry(scaling_choices(), scaling);
  if (scaling_choice == nullptr) return "";
  if (scaling_choice->kind == ScalingKind::kNone) {
    const NormalizerChoice* normalizer_choice = find_entry(normalizer_choices(), normalizer);
    return normalizer_choice == nullptr ? "" : normalizer_choice->label;
  }
  for (const auto& [named_normalizer, name] : scaling_choice->method_names) {
    if (named_normalizer == normalizer) return name;
  }
  return "";
}

std::string method_display_name(const std::string& normalizer, const std::string& scaling) {
  const std::string name = method_common_name(normalizer, scaling);
  return name.empty() ? normalizer + " + " + scaling : name;
}

std::vector<NamedMethod> named_methods() {
  std::vector<NamedMethod> methods;
  for (const NormalizerChoice& normalizer : normalizer_choices()) {
    if (!normalizer.label.empty()) methods.push_back({normalizer.name, "none", normalizer.label});
  }
  for (const ScalingChoice& scaling : scaling_choices()) {
    for (const auto& [normalizer, name] : scaling.method_names)
      methods.push_back({normalizer, scaling.name, name});
  }
  return methods;
}

}  // namespace lengen
