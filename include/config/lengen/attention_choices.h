#pragma once
// The choices of model.attention's axes (normalizers, length scalings, positions) by name, with
// help, parameters and labels. No tensors: the layers above build modules from these names.
#include <string>
#include <utility>
#include <vector>

#include "lengen/named_entries.h"

namespace lengen {

struct NormalizerChoice {
  std::string name;                     // model.attention.normalizer
  std::string help;                     // one phrase, for the config reference
  std::vector<std::string> parameters;  // the model.attention keys it reads
  std::string label;                    // the report's name without length scaling; "" for none
};

// What a scaling or position encoding asks of the fused kernel beyond q k^T; any other term is
// kDenseOnly, and the attention keeps the dense path rather than drop it.
enum class FusedTerm { kNone, kRotation, kHeadSlopes, kQueryFactor, kDenseOnly };

enum class ScalingKind { kNone, kSsmax, kLearned, kAsentmax };

// One length scaling and the paper's names of the methods it makes (softmax + ssmax = "SSMax").
struct ScalingChoice : KindEntry<ScalingKind> {
  std::vector<std::pair<std::string, std::string>> method_names;  // normalizer, method name
  FusedTerm fused;
};

struct PositionChoice {
  std::string name;                     // model.attention.positions
  std::string help;                     // one phrase, for the config reference
  std::vector<std::string> parameters;  // the model.attention keys it reads
  FusedTerm fused;
};

// Every choice of each axis, in the order the config reference and the errors list them.
const std::vector<NormalizerChoice>& normalizer_choices();
const std::vector<ScalingChoice>& scaling_choices();
const std::vector<PositionChoice>& position_choices();

std::vector<std::string> normalizer_names();
std::vector<std::string> scaling_names();
std::vector<std::string> position_names();

// The names of the normalizers that read model.attention.`parameter` ("learn_alpha": entmax).
std::vector<std::string> normalizers_reading(const std::string& parameter);

// By name; UserError "unknown scaling 'x' (did you mean ...); known: ..." otherwise.
ScalingKind scaling_kind(const std::string& name);
const ScalingChoice& scaling_choice(const std::string& name);
const PositionChoice& position_choice(const std::string& name);

// The paper's name of a normalizer with a length scaling ("Softmax", "ASEntmax"); "" when it has
// none or either name is unknown.
std::string method_common_name(const std::string& normalizer, const std::string& scaling);

// method_common_name, or "normalizer + scaling" for a pair without a common name.
std::string method_display_name(const std::string& normalizer, const std::string& scaling);

// A normalizer with a length scaling that has a common name.
struct NamedMethod {
  std::string normalizer;
  std::string scaling;
  std::string name;  // method_common_name
};

// Every named method: the labelled normalizers, then each scaling's methods. Benchmarks time these.
std::vector<NamedMethod> named_methods();

}  // namespace lengen
