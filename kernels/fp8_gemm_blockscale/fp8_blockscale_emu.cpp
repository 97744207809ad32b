// CPU emulation of the block-scale fp8 GEMM with split-K: the canonical order (the plain kernel,
// bit for bit) and the blocked order (the matrix-unit kernel's structure). Tickets play no part on
// the CPU: the slices are added in their order by construction.
#include <algorithm>
#include <vector>

#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_math.hpp"

namespace fb {
namespace {

float decode(std::uint8_t v, Fp8Flavour f) {
  return f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_to_float(v) : fp8_e4m3fnuz_to_float(v);
}

// dot(a, w) of one 128-K block: the canonical sequential fp32 sum, or the exact sum rounded once.
// (128 products of 8 significant bits within 2^-20 .. 2^16 need fewer than 53 bits: the double
// sum is exact.)
float block_dot(const float* a, const float* w, bool exact) {
  if (exact) {
    double s = 0.0;
    for (int k = 0; k < kBlockscaleBlock; ++k) s += static_cast<double>(a[k]) * static_cast<double>(w[k]);
    return static_cast<float>(s);
  }
  float s = 0.0f;
  for (int k = 0; k < kBlockscaleBlock; ++k) s = s + a[k] * w[k];
  return s;
}

void emulate(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, const std::vector<std::int64_t>& rows_in,
             bool exact_blocks) {
  std::vector<std::int64_t> rows = rows_in;
  if (rows.empty())
    for (std::int64_t m = 0; m < p.rows; ++m) rows.push_back(m);
  std::vector<float> w(static_cast<std::size_t>(p.cols * p.depth));
  for (std::int64_t i = 0; i < p.cols * p.depth; ++i) w[i] = decode(b.b[i], p.flavour);
  const auto count = static_cast<std::int64_t>(rows.size());
  std::vector<float> a(static_cast<std::size_t>(count * p.depth));
  for (std::int64_t i = 0; i < count; ++i)
    for (std::int64_t k = 0; k < p.depth; ++k) a[i * p.depth + k] = decode(b.a[rows[i] * p.depth + k], p.flavour);
  const std::int64_t kb_count = p.k_blocks();
#pragma omp parallel for schedule(static) if (count * p.cols * p.depth >= (1 << 22))
  for (std::int64_t o = 0; o < count * p.cols; ++o) {
    const std::int64_t i = o / p.cols, n = o % p.cols, m = rows[i];
    float acc = b.acc[m * p.cols + n];  // the start value: +0 when the contract holds
    for (std::int64_t s = 0; s < p.slices; ++s) {
      float part = 0.0f;
      for (std::int64_t kb = p.slice_begin(s); kb < p.slice_begin(s + 1); ++kb) {
        const float dot = block_dot(&a[i * p.depth + kb * kBlockscaleBlock], &w[n * p.depth + kb * kBlockscaleBlock],
                                    exact_blocks);
        part = blockscale_promote(part, dot, b.a_scale[m * kb_count + kb],
                                  b.b_scale[(n / kBlockscaleBlock) * kb_count + kb]);
      }
      acc = acc + part;
    }
    b.acc[m * p.cols + n] = acc;
    b.c[m * p.cols + n] = bf16_from_float(acc);
  }
}

}  // namespace

void fp8_blockscale_canonical_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b,
                                  const std::vector<std::int64_t>& rows) {
  emulate(p, b, rows, false);
}

void fp8_blockscale_blocked_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b,
                                const std::vector<std::int64_t>& rows) {
  emulate(p, b, rows, true);
}

}  // namespace fb
