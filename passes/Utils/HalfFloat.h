//===- HalfFloat.h - float16 and bfloat16 bit patterns as f32 -----*- C++ -*-===//
//
// The f32 value of an IEEE binary16 or a bfloat16 bit pattern, exactly
// (every such value is an f32). Header only: kiln-widen-half converts half
// weights with it, and the kiln tool's tensor files read half elements.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_UTILS_HALFFLOAT_H
#define KILN_PASSES_UTILS_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {

/// The value of the float16 bit pattern `h`.
inline float float16BitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    float v = std::ldexp(float(mantissa), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)
                                   : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// The value of the bfloat16 bit pattern `h` (f32's upper half).
inline float bfloat16BitsToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

} // namespace kiln

#endif // KILN_PASSES_UTILS_HALFFLOAT_H
