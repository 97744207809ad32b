// CPU emulation of SwiGLU and its fp8 producer: the plain activation (the chain's first member),
// the fused producer, and the chain (activation, then the fp8 quant emulation of kernels/fp8_quant).
// Same arithmetic as the kernels (swiglu_fp8_math.hpp, fp8_quant_math.hpp). Rows run in parallel.
#include <vector>

#include "kernels/fp8_quant/fp8_quant_math.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"

namespace fb {
namespace {

// bf16 out of one row into dst[0..d).
template <bool kOai>
void activation_row(const SwigluFp8Params& p, const SwigluFp8Buffers& b, std::int64_t row, std::uint16_t* dst) {
  const std::uint16_t* gate = b.gate_up + row * 2 * p.d;
  const std::uint16_t* up = gate + p.d;
  for (std::int64_t i = 0; i < p.d; ++i)
    dst[i] = bf16_from_float(swiglu_value<kOai>(bf16_to_float(gate[i]), bf16_to_float(up[i])));
}

template <bool kOai>
void activation(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
#pragma omp parallel for schedule(static) if (p.rows * p.d >= (1 << 16))
  for (std::int64_t row = 0; row < p.rows; ++row) activation_row<kOai>(p, b, row, b.out + row * p.d);
}

template <bool kOai>
void fused(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
#pragma omp parallel if (p.rows * p.d >= (1 << 16))
  {
    std::vector<std::uint16_t> local(static_cast<std::size_t>(p.d));
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < p.rows; ++row) {
      // With write_out the row goes straight to out; otherwise to a row buffer (fused: no workspace).
      std::uint16_t* y = p.write_out ? b.out + row * p.d : local.data();
      activation_row<kOai>(p, b, row, y);
      fp8_quant_row_emu(p.quant(), row, y, b.q, b.scales);  // the fp8 epilogue, as the chain quantizes
    }
  }
}

}  // namespace

void swiglu_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  if (p.activation == SwigluActivation::swiglu_oai)
    activation<true>(p, b);
  else
    activation<false>(p, b);
}

void swiglu_fp8_fused_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  if (p.activation == SwigluActivation::swiglu_oai)
    fused<true>(p, b);
  else
    fused<false>(p, b);
}

void swiglu_fp8_chain_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  swiglu_emu(p, b);
  Fp8QuantBuffers qb;
  qb.x = b.out;
  qb.q = b.q;
  qb.scales = b.scales;
  fp8_quant_fused_emu(p.quant(), qb);
}

}  // namespace fb
