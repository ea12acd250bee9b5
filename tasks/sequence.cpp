#include "lengen/sequence.h"

#include <algorithm>

namespace lengen {

EncodedSample encode(const Sample& sample) {
  EncodedSample encoded;
  const size_t size = sample.src.size() + sample.trg.size() + 2;
  encoded.input.reserve(size);
  encoded.target.reserve(size);
  encoded.input.push_back(kBos);
  for (int32_t symbol : sample.src) encoded.input.push_back(symbol_to_token(symbol));
  encoded.input.push_back(kSep);
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
