#pragma once
// Model tokens: four special tokens, then the task's symbols (docs/method.md, "Sequences and loss").
// A training sequence is BOS src SEP trg EOS; the model reads seq[:-1] and predicts seq[1:]. A
// sample labelled in place (Framing::kLabelPerPosition) is BOS src, and the position of source
// symbol t predicts label t.
#include <cstdint>
#include <vector>

#include "lengen/task.h"

namespace lengen {

constexpr int32_t kPad = 0;
constexpr int32_t kBos = 1;
constexpr int32_t kSep = 2;
constexpr int32_t kEos = 3;
constexpr int32_t kFirstSymbol = 4;

inline int32_t symbol_to_token(int32_t symbol) { return symbol + kFirstSymbol; }
inline int64_t vocab_size(int64_t num_symbols) { return num_symbols + kFirstSymbol; }

struct EncodedSample {
  std::vector<int32_t> input;    // BOS src SEP trg   (length |src| + |trg| + 2); labelled: BOS src
  std::vector<int32_t> target;   // src SEP trg EOS   (same length);             labelled: PAD trg
  std::vector<uint8_t> in_loss;  // 1 where target is a trg token or the final EOS
};

EncodedSample encode(const Sample& sample);

// The decoding prompt: BOS src SEP (samples framed kTargetAfterSource; labelled ones decode nothing).
std::vector<int32_t> encode_prompt(const Symbols& src);

}  // namespace lengen
