#include "lengen/sequence.h"

#include <algorithm>

namespace lengen {

namespace {

// BOS src, each source symbol's position predicting its label; BOS predicts nothing.
EncodedSample encode_labels(const Sample& sample) {
  EncodedSample encoded;
  const size_t size = sample.src.size() + 1;
  encoded.input.reserve(size);
  encoded.input.push_back(kBos);
  for (int32_t symbol : sample.src) encoded.input.push_back(symbol_to_token(symbol));
  encoded.target.reserve(size);
  encoded.target.push_back(kPad);
  for (int32_t label : sample.trg) encoded.target.push_back(symbol_to_token(label));
  // A sample whose labels do not cover its source (a malformed file is refused before this) keeps
  // the sizes aligned; the uncovered positions are left out of the loss.
  encoded.target.resize(size, kPad);
  encoded.in_loss.assign(size, 1);
  encoded.in_loss[0] = 0;
  for (size_t t = sample.trg.size() + 1; t < size; ++t) encoded.in_loss[t] = 0;
  return encoded;
}

}  // namespace

EncodedSample encode(const Sample& sample) {
  if (sample.framing == Framing::kLabelPerPosition) return encode_labels(sample);
  EncodedSample encoded;
  const size_t size = sample.src.size() + sample.trg.size() + 2;
  encoded.input = encode_prompt(sample.src);
  for (int32_t symbol : sample.trg) encoded.input.push_back(symbol_to_token(symbol));
  encoded.target.assign(encoded.input.begin() + 1, encoded.input.end());
  encoded.target.push_back(kEos);
  // Predicting the source and the SEP is not the task; the loss starts at the first target token.
  encoded.in_loss.assign(size, 0);
  std::fill(encoded.in_loss.begin() + static_cast<std::ptrdiff_t>(sample.src.size() + 1),
            encoded.in_loss.end(), 1);
  return encoded;
}

std::vector<int32_t> encode_prompt(const Symbols& src) {
  std::vector<int32_t> prompt;
  prompt.reserve(src.size() + 2);
  prompt.push_back(kBos);
  for (int32_t symbol : src) prompt.push_back(symbol_to_token(symbol));
  prompt.push_back(kSep);
  return prompt;
}

}  // namespace lengen
