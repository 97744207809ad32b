// CPU emulation of the per-token x per-channel fp8 GEMM: the canonical order (what the plain and the
// small-M kernels compute, bit for bit) and the blocked order (the matrix-unit kernel's structure).
#include <algorithm>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"

namespace fb {
namespace {

std::vector<float> decode_all(const std::uint8_t* q, std::int64_t n, Fp8Flavour f) {
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_to_float(q[i]) : fp8_e4m3fnuz_to_float(q[i]);
  return out;
}

std::vector<std::int64_t> all_rows_if_empty(const std::vector<std::int64_t>& rows, std::int64_t m) {
  if (!rows.empty()) return rows;
  std::vector<std::int64_t> all(static_cast<std::size_t>(m));
  for (std::int64_t r = 0; r < m; ++r) all[r] = r;
  return all;
}

// Runs `acc(a_row, b_row)` for every listed row and every column, then the epilogue. One parallel
// region over all outputs (each output is computed alone, so the thread count changes nothing).
template <class Acc>
void for_each_output(const Fp8GemmParams& p, const Fp8GemmBuffers& b, const std::vector<std::int64_t>& rows, Acc acc) {
  const std::vector<float> bv = decode_all(b.b, p.cols * p.depth, p.flavour);
  const std::vector<std::int64_t> list = all_rows_if_empty(rows, p.rows);
  const auto count = static_cast<std::int64_t>(list.size());
  std::vector<float> av(static_cast<std::size_t>(count * p.depth));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::vector<float> row = decode_all(b.a + list[i] * p.depth, p.depth, p.flavour);
    std::copy(row.begin(), row.end(), av.begin() + i * p.depth);
  }
#pragma omp parallel for schedule(static) if (count * p.cols * p.depth >= (1 << 22))
  for (std::int64_t o = 0; o < count * p.cols; ++o) {
    const std::int64_t i = o / p.cols, n = o % p.cols, m = list[i];
    const float sum = acc(av.data() + i * p.depth, bv.data() + n * p.depth);
    b.c[m * p.cols + n] = fp8_gemm_epilogue(sum, b.b_scale[n], b.a_scale[m]);
  }
}

}  // namespace

void fp8_gemm_canonical_emu(const Fp8GemmParams& p, const Fp8GemmBuffers& b, const std::vector<std::int64_t>& rows) {
  const std::int64_t depth = p.depth;
  for_each_output(p, b, rows, [depth](const float* a, const float* w) {
    float partial[kFp8GemmPartials] = {};
    for (std::int64_t c = 0; c < depth / kFp8GemmChunk; ++c) {
      float& s = partial[c % kFp8GemmPartials];
      s = fp8_gemm_chunk_add(s, a + c * kFp8GemmChunk, w + c * kFp8GemmChunk);
    }
    return fp8_gemm_tree16(partial);
  });
}

void fp8_gemm_blocked_emu(const Fp8GemmParams& p, const Fp8GemmBuffers& b, const std::vector<std::int64_t>& rows) {
  const std::int64_t depth = p.depth;
  for_each_output(p, b, rows, [depth](const float* a, const float* w) {
    float acc = 0.0f;
    for (std::int64_t k0 = 0; k0 < depth; k0 += kFp8GemmBlockK) {
      // The block's exact sum: at most 128 products of 8 significant bits within 2^-20 .. 2^16
      // need fewer than 53 bits, so the double sum never rounds; then one rounding to fp32.
      double exact = 0.0;
      for (std::int64_t k = k0; k < k0 + kFp8GemmBlockK && k < depth; ++k)
        exact += static_cast<double>(a[k]) * static_cast<double>(w[k]);
      acc = acc + static_cast<float>(exact);
    }
    return acc;
  });
}

}  // namespace fb
