#pragma once
// The one record of each normalizer on the tensor side: how to build it from the config, which
// row kernel of the fused attention computes it, the variants the benchmarks time and the tests
// check, and what the tests may assume of its weights. The normalizers are those of
// normalizer_list.h (the config layer's list, which sweeps read without LibTorch, with each one's
// name, help, parameters and report label); each record is the function NAME_normalizer() in its
// normalizer's own .cpp. Adding a normalizer: that .cpp and one line in normalizer_list.h.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lengen {

// A normalizer picked by name, applied along the last dim. `alpha` is used by "entmax"
// (a double or a broadcastable tensor, e.g. a learned per-head alpha).
struct NormalizerSpec {
  std::string name = "softmax";  // one of normalizer_factory_names()
  double alpha = 1.5;            // entmax only
  int64_t topk = 32;             // topk only
};

using NormalizerFn = std::function<torch::Tensor(const torch::Tensor& scores, const torch::Tensor& alpha)>;

// One variant of a normalizer: its name in benchmark tables and test traces, and its spec; with
// `alpha_as_tensor` the spec's alpha is passed as a tensor, as a learned alpha is. Variants that
// are not `timed` are checked by the tests only.
struct NormalizerVariant {
  std::string label;
  NormalizerSpec spec;
  bool alpha_as_tensor = false;
  bool timed = true;
};

// The row kernels of the fused attention (fused_attention.h); a normalizer maps onto one of them,
// with kEntmax's alpha, or keeps the dense path.
enum class FusedRowKernel { kSoftmax, kSparsemax, kEntmax15, kEntmax };

struct FusedRow {
  FusedRowKernel kernel;
  double alpha = 0;  // kEntmax's alpha for every head, unless the attention learns one per head
};

// What holds for a normalizer's weights beyond "finite, >= 0, exactly 0 on masked entries": the
// tests check each property a normalizer declares and skip the ones it does not.
struct NormalizerTraits {
  bool rows_sum_to_one = true;  // false: at most one (stick-breaking leaves part of the stick)
  bool shift_invariant = true;  // f(z + c) = f(z)
  // Which of two tied scores it keeps is arbitrary (top-k): two implementations agree only up
  // to that choice, so the tests compare them on rows without ties alone.
  bool picks_among_ties = false;
  // Equal scores get unequal weights by where they sit in the row (stick-breaking).
  bool order_matters = false;
};

struct NormalizerFactory {
  std::string name;  // model.attention.normalizer, from normalizer_list.h
  // Builds it from the spec; UserError naming the normalizer when a parameter is out of range.
  std::function<NormalizerFn(const NormalizerSpec&)> make;
  // The fused row kernel that computes what `spec` computes (with an alpha learned per head when
  // `learned`), or nothing for the dense path; an empty function: always the dense path.
  std::function<std::optional<FusedRow>(const NormalizerSpec&, bool learned)> fused;
  // Empty: one variant, the default spec under the normalizer's name.
  std::vector<NormalizerVariant> variants;
  NormalizerTraits traits;
};

// Every normalizer's record, in the order of normalizer_list.h.
const std::vector<NormalizerFactory>& normalizer_factories();
std::vector<std::string> normalizer_factory_names();
// The factory named spec.name; UserError naming the closest name when there is none.
const NormalizerFactory& normalizer_factory(const std::string& name);

// Every normalizer's variants, in the factories' order; with `timed_only` those the benchmarks time.
std::vector<NormalizerVariant> normalizer_variants(bool timed_only = false);
// The variant's normalizer as a function of the scores alone (a tensor alpha in fp32, or in double
// for double scores).
std::function<torch::Tensor(const torch::Tensor&)> variant_normalizer(const NormalizerVariant& variant);

// Throws UserError naming the normalizer when it is unknown (with the closest name) or its
// parameters are invalid.
NormalizerFn make_normalizer(const NormalizerSpec& spec);

// The fused row kernel for `spec`, or nothing when the normalizer keeps the dense path.
std::optional<FusedRow> fused_row_kernel(const NormalizerSpec& spec, bool learned);

}  // namespace lengen
