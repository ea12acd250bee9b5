#pragma once
// Eight floats as one value (GCC/Clang vector extension): one AVX2 register on x86-64-v3, two SSE
// registers on baseline x86-64. For the loops that the auto-vectorizer leaves scalar. The helpers
// are inlined into the multiversioned loops that use them (LENGEN_ROW_KERNEL flattens them), so
// no call passes one across an ABI boundary.
#include <cmath>
#include <cstdint>
#include <cstring>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lengen::detail {

typedef float Floats __attribute__((vector_size(32)));
typedef int32_t Ints __attribute__((vector_size(32)));
constexpr int kFloats = 8;

inline Floats load_floats(const float* x) {
  Floats v;
  std::memcpy(&v, x, sizeof(v));
  return v;
}

inline void store_floats(float* y, const Floats& v) { std::memcpy(y, &v, sizeof(v)); }

inline float sum_of_lanes(const Floats& v) {
  float out = 0;
  for (int j = 0; j < kFloats; ++j) out += v[j];
  return out;
}

// Below about -103.97 float's exp rounds to 0 (the smallest subnormal is 2^-149); LibTorch's
// softmax gets the same zeros.
constexpr float kExpUnderflow = -103.972f;

// exp(d) for d <= 0 (Cephes' expf: a degree-6 polynomial on d - n ln 2, |error| ~1 ulp), with
// subnormal results and exact zeros below kExpUnderflow, -inf included.
inline Floats exp_nonpositive(const Floats& d) {
  const Floats clamped = d > kExpUnderflow ? d : Floats{} + kExpUnderflow;
  // n = round(d / ln 2) by the 1.5 * 2^23 trick (|n| < 2^22 here).
  const Floats magic = Floats{} + 12582912.0f;
  const Floats n = (clamped * 1.44269504088896341f + magic) - magic;
  const Floats r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  Floats p = Floats{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n in two factors, 2^(n + 64) and 2^-64, so that n down to -150 still scales correctly into
  // the subnormals.
  const Ints exponent = (__builtin_convertvector(n, Ints) + (127 + 64)) << 23;
  Floats scale;
  std::memcpy(&scale, &exponent, sizeof(scale));
  const Floats e = p * scale * 5.42101086242752217e-20f;
  return d > kExpUnderflow ? e : Floats{};
}

// log2(v) for v >= 0: the exponent plus a degree-7 polynomial of the mantissa m in [1, 2)
// (interpolated at Chebyshev nodes; within 4e-7 of log2 for normal v). The attention entropy
// -sum p ln p only needs it where p > 0, so v = 0 and subnormals get a finite stand-in (about -127)
// that their weight of 0 (or below 1e-37) cancels: no select, which keeps this to about half the
// operations of a full-range logf.
inline Floats log2_of_weight(const Floats& v) {
  Ints bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const Floats exponent = __builtin_convertvector(((bits >> 23) & 0xff) - 127, Floats);
  const Ints mantissa_bits = (bits & 0x007fffff) | 0x3f800000;
  Floats m;
  std::memcpy(&m, &mantissa_bits, sizeof(m));
  const Floats t = m - 1.0f;
  Floats y = Floats{} - 1.207702027e-02f;
  y = y * t + 6.274843357e-02f;
  y = y * t - 1.541520064e-01f;
  y = y * t + 2.551763492e-01f;
  y = y * t - 3.530963533e-01f;
  y = y * t + 4.800124608e-01f;
  y = y * t - 7.213067574e-01f;
  y = y * t + 1.442694725e+00f;
  return exponent + y * t;
}

// ln 2, which turns sums of p log2 p into entropies in nats.
constexpr double kLn2 = 0.693147180559945309;

}  // namespace lengen::detail

#pragma GCC diagnostic pop
