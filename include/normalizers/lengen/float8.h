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

// -p ln p for p in [0, 1] (Cephes' logf: the mantissa m in [sqrt(1/2), sqrt(2)) and a degree-8
// polynomial in m - 1, |error| ~1 ulp); 0 where p is 0 or below float's smallest normal (where
// -p ln p < 1e-36).
inline Floats entropy_terms(const Floats& p) {
  Ints bits;
  std::memcpy(&bits, &p, sizeof(bits));
  // p = 2^e * m with m in [1/2, 1), then m scaled into [sqrt(1/2), sqrt(2)).
  Ints e = ((bits >> 23) & 0xff) - 126;
  const Ints mantissa_bits = (bits & 0x007fffff) | 0x3f000000;
  Floats m;
  std::memcpy(&m, &mantissa_bits, sizeof(m));
  const Ints small = m < 0.707106781186547524f;
  e += small;  // a true lane is -1
  const Floats x = (small ? m + m : m) - 1.0f;
  const Floats z = x * x;
  Floats y = Floats{} + 7.0376836292e-2f;
  y = y * x - 1.1514610310e-1f;
  y = y * x + 1.1676998740e-1f;
  y = y * x - 1.2420140846e-1f;
  y = y * x + 1.4249322787e-1f;
  y = y * x - 1.6668057665e-1f;
  y = y * x + 2.0000714765e-1f;
  y = y * x - 2.4999993993e-1f;
  y = y * x + 3.3333331174e-1f;
  const Floats exponent = __builtin_convertvector(e, Floats);
  y = y * x * z + exponent * -2.12194440e-4f - 0.5f * z;
  const Floats log_p = x + y + exponent * 0.693359375f;
  return p >= 1.17549435e-38f ? -p * log_p : Floats{};
}

}  // namespace lengen::detail

#pragma GCC diagnostic pop
