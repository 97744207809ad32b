#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"

namespace fb {

namespace {

std::uint8_t encode(double v, Fp8Flavour f) {
  return f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_from_float(static_cast<float>(v))
                                 : fp8_e4m3fnuz_from_float(static_cast<float>(v));
}

std::uint8_t max_code(Fp8Flavour f) { return f == Fp8Flavour::e4m3fn ? 0x7E : 0x7F; }

}  // namespace

std::uint8_t fp8_nan_code(Fp8Flavour f) { return f == Fp8Flavour::e4m3fn ? 0x7F : 0x80; }

void fill_fp8_operand(std::uint8_t* q, std::int64_t rows, std::int64_t cols, Distribution d, Fp8Flavour f,
                      std::uint64_t seed, std::uint64_t stream) {
  const Distribution values = d == Distribution::edge || d == Distribution::nan ? Distribution::normal : d;
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < cols; ++k) {
      const std::uint64_t i = static_cast<std::uint64_t>(r * cols + k);
      q[i] = encode(32.0 * draw(values, seed, stream, i, k), f);
    }
  if (d == Distribution::edge) {
    for (std::int64_t r = 0; r < rows && r < 4; ++r)
      for (std::int64_t k = 0; k < cols; ++k) {
        std::uint8_t& v = q[r * cols + k];
        if (r == 0) v = max_code(f);
        if (r == 1) v = 0x00;
        if (r == 2) v = static_cast<std::uint8_t>(max_code(f) | (k % 2 ? 0x80 : 0x00));
        if (r == 3) v = 0x01;
      }
  }
}

void fill_fp8_scales(float* s, std::int64_t count, std::uint64_t seed, std::uint64_t stream) {
  for (std::int64_t i = 0; i < count; ++i)
    s[i] = static_cast<float>(0x1.0p-7 * (1.0 + uniform01(seed, stream, static_cast<std::uint64_t>(i))));
}

}  // namespace fb
