#include "lengen/sequence.h"

#include <gtest/gtest.h>

namespace lengen {
namespace {

TEST(Encode, ShiftsByOneAndLossCoversTargetAndEos) {
  Sample sample{{0, 5}, {7, 8, 9}};
  EncodedSample encoded = encode(sample);
  const int32_t a = symbol_to_token(0), b = symbol_to_token(5);
  const int32_t x = symbol_to_token(7), y = symbol_to_token(8), z = symbol_to_token(9);
  EXPECT_EQ(encoded.input, (std::vector<int32_t>{kBos, a, b, kSep, x, y, z}));
  EXPECT_EQ(encoded.target, (std::vector<int32_t>{a, b, kSep, x, y, z, kEos}));
  EXPECT_EQ(encoded.in_loss, (std::vector<uint8_t>{0, 0, 0, 1, 1, 1, 1}));
}

TEST(Encode, LabelsArePredictedAtTheirOwnSourcePosition) {
  Sample sample{{0, 5, 6}, {1, 2, 3}, Framing::kLabelPerPosition};
  EncodedSample encoded = encode(sample);
  EXPECT_EQ(encoded.input, (std::vector<int32_t>{kBos, symbol_to_token(0), symbol_to_token(5), symbol_to_token(6)}));
  EXPECT_EQ(encoded.target, (std::vector<int32_t>{kPad, symbol_to_token(1), symbol_to_token(2), symbol_to_token(3)}));
  EXPECT_EQ(encoded.in_loss, (std::vector<uint8_t>{0, 1, 1, 1}));
}

TEST(Encode, PromptEndsWithSep) {
  EXPECT_EQ(encode_prompt({3, 0}),
            (std::vector<int32_t>{kBos, symbol_to_token(3), symbol_to_token(0), kSep}));
  EXPECT_EQ(encode_prompt({}), (std::vector<int32_t>{kBos, kSep}));
}

TEST(Encode, SymbolsNeverCollideWithSpecialTokens) {
  EXPECT_EQ(symbol_to_token(0), kFirstSymbol);
  EXPECT_EQ(symbol_to_token(41), 41 + kFirstSymbol);
  EXPECT_EQ(vocab_size(32), 36);
}

}  // namespace
}  // namespace lengen
