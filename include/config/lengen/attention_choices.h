#pragma once
// The choices of model.attention's pluggable axes (normalizers, length scalings, position
// encodings), as the config, its reference, the errors and the report know them: names, help, the
// model.attention keys each reads, the report's labels and the paper's method names. No tensors
// here: the normalizer functions (normalizers.h) and the scaling and position modules
// (length_scaling.h, positions.h) are built from these names and kinds in the layers above.
#include <string>
#include <utility>
#include <vector>

#include "lengen/named_entries.h"

namespace lengen {

// One normalizer: the config's choice and its help, the parameters it reads ("alpha", "topk")
// and the report's name for it without length scaling ("" for none). make_normalizer
// (normalizers.h) has one factory for each name.
struct NormalizerChoice {
  std::string name;                     // model.attention.normalizer
  std::string help;                     // one phrase, for the config reference
  std::vector<std::string> parameters;  // the model.attention keys it reads
  std::string label;                    // the report's name without length scaling; "" for none
};

// What a length scaling or a position encoding asks of the attention beyond q k^T. The fused
// evaluation kernel (attention/fused_attention.h) computes exactly these terms: q and k rotated
// before it, a bias of -slope_h * (query position - key position) per head, q multiplied by a
// factor per query. A choice with any other term declares kDenseOnly, and the attention keeps the
// dense path for it instead of dropping the term.
enum class FusedTerm { kNone, kRotation, kHeadSlopes, kQueryFactor, kDenseOnly };

enum class ScalingKind { kNone, kSsmax, kLearned, kAsentmax };

// One length scaling, the paper's names of the methods it makes with a normalizer (softmax with
// ssmax is "SSMax") and what it asks of the fused kernel.
struct ScalingChoice : KindEntry<ScalingKind> {
  std::vector<std::pair<std::string, std::string>> method_names;  // normalizer, method name
  FusedTerm fused;
};

// One position encoding (a line of position_list.h) and what it asks of the fused kernel; its
// tensors are its record in the attention layer (position_record.h).
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

// The kind of the scaling named `name`; UserError "unknown scaling 'x'
// (did you mean ...); known: ..." otherwise.
ScalingKind scaling_kind(const std::string& name);
// The whole entry, likewise.
const ScalingChoice& scaling_choice(const std::string& name);
const PositionChoice& position_choice(const std::string& name);

// The paper's name of a normalizer with a length scaling ("Softmax", "ASEntmax"): with "none" the
// normalizer's own label, otherwise the scaling's method name for it; "" when it has none (or
// either name is unknown, as in results of another version).
std::string method_common_name(const std::string& normalizer, const std::string& scaling);

// method_common_name, or "normalizer + scaling" for a pair without a common name.
std::string method_display_name(const std::string& normalizer, const std::string& scaling);

// A normalizer with a length scaling that has a common name.
struct NamedMethod {
  std::string normalizer;
  std::string scaling;
  std::string name;  // method_common_name
};

// Every named method: each labelled normalizer without length scaling, in table order, then each
// scaling's methods ("Softmax", "Sparsemax", ..., "SSMax", "ASEntmax"). The benchmarks time these.
std::vector<NamedMethod> named_methods();

}  // namespace lengen
