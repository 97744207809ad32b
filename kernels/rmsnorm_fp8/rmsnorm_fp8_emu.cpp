// CPU emulation of RMSNorm and its fp8 producer: the plain norm (the chain's first member), the
// fused producer, and the chain (norm, then the fp8 quant emulation of kernels/fp8_quant). Same
// arithmetic as the kernels (rmsnorm_fp8_math.hpp, fp8_quant_math.hpp) and the same canonical sum
// order (canonical_sum.hpp host twin). Rows are independent and run in parallel.
#include <cstring>
#include <vector>

#include "kernels/common/canonical_sum.hpp"
#include "kernels/fp8_quant/fp8_quant_math.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_math.hpp"

namespace fb {
namespace {

// One row of the norm: s (and residual_out), r, then bf16(y) into y_out[0..n).
void norm_row(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, std::int64_t row, std::vector<float>& s,
              std::uint16_t* y_out) {
  const std::int64_t n = p.hidden;
  const std::uint16_t* x = b.x + row * n;
  for (std::int64_t i = 0; i < n; ++i) {
    s[i] = bf16_to_float(x[i]);
    if (p.residual) {
      s[i] = rmsnorm_add(s[i], bf16_to_float(b.residual[row * n + i]));
      b.residual_out[row * n + i] = bf16_from_float(s[i]);
    }
  }
  const float ss = canonical_row_sum(n, [&](std::int64_t i) { return rmsnorm_square(s[i]); });
  const float r = rmsnorm_inverse_rms(ss, n, p.eps);
  for (std::int64_t i = 0; i < n; ++i) {
    const float factor = rmsnorm_weight_factor(bf16_to_float(b.weight[i]), p.weight_offset);
    y_out[i] = bf16_from_float(rmsnorm_y(s[i], r, factor));
  }
}

void fused(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b) {
#pragma omp parallel if (p.rows * p.hidden >= (1 << 16))
  {
    std::vector<float> s(static_cast<std::size_t>(p.hidden));
    std::vector<std::uint16_t> local(static_cast<std::size_t>(p.hidden));
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < p.rows; ++row) {
      // With write_out the row goes straight to out; otherwise to a row buffer (fused: no workspace).
      std::uint16_t* y = p.write_out ? b.out + row * p.hidden : local.data();
      norm_row(p, b, row, s, y);
      fp8_quant_row_emu(p.quant(), row, y, b.q, b.scales);  // the fp8 epilogue, as the chain quantizes
    }
  }
}

}  // namespace

void rmsnorm_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b) {
#pragma omp parallel if (p.rows * p.hidden >= (1 << 16))
  {
    std::vector<float> s(static_cast<std::size_t>(p.hidden));
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < p.rows; ++row) norm_row(p, b, row, s, b.out + row * p.hidden);
  }
}

void rmsnorm_fp8_fused_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b) {
  fused(p, b);
  if (p.zero_bytes > 0) std::memset(b.zero, 0, static_cast<std::size_t>(p.zero_bytes));  // the side job
}

void rmsnorm_fp8_chain_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b) {
  rmsnorm_emu(p, b);
  Fp8QuantBuffers qb;
  qb.x = b.out;
  qb.q = b.q;
  qb.scales = b.scales;
  fp8_quant_fused_emu(p.quant(), qb);
}

}  // namespace fb
