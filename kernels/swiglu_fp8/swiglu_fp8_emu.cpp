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

// The fused producer's fp8 epilogue on one row of bf16 out, with the quant kernels' arithmetic.
template <class Format>
void quantize_row(const SwigluFp8Params& p, const SwigluFp8Buffers& b, std::int64_t row, const std::uint16_t* y) {
  const Fp8QuantParams qp = p.quant();
  const std::int64_t group = qp.group_size();
  for (std::int64_t g = 0; g < qp.groups_per_row(); ++g) {
    const std::uint16_t* yg = y + g * group;
    std::uint32_t amax = 0;
    for (std::int64_t i = 0; i < group; ++i) amax = max_u32(amax, bf16_abs_bits(yg[i]));
    const Fp8Scale s = fp8_scale_from_amax_bits(amax, p.flavour, p.scale_format);
    std::uint8_t* q = b.q + row * p.d + g * group;
    for (std::int64_t i = 0; i < group; ++i) q[i] = fp8_quantize_bf16<Format>(yg[i], s.inverse);
    fp8_store_scale(b.scales, fp8_scale_index(row, g, p.rows, qp.groups_per_row(), p.layout), s, p.scale_format);
  }
}

template <bool kOai>
void activation(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < p.rows; ++row) activation_row<kOai>(p, b, row, b.out + row * p.d);
}

template <class Format, bool kOai>
void fused(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
#pragma omp parallel
  {
    std::vector<std::uint16_t> local(static_cast<std::size_t>(p.d));
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < p.rows; ++row) {
      // With write_out the row goes straight to out; otherwise to a row buffer (fused: no workspace).
      std::uint16_t* y = p.write_out ? b.out + row * p.d : local.data();
      activation_row<kOai>(p, b, row, y);
      quantize_row<Format>(p, b, row, y);
    }
  }
}

template <class Format>
void fused_for_format(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  if (p.activation == SwigluActivation::swiglu_oai)
    fused<Format, true>(p, b);
  else
    fused<Format, false>(p, b);
}

}  // namespace

void swiglu_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  if (p.activation == SwigluActivation::swiglu_oai)
    activation<true>(p, b);
  else
    activation<false>(p, b);
}

void swiglu_fp8_fused_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
  if (p.flavour == Fp8Flavour::e4m3fn)
    fused_for_format<Fp8E4m3fnFormat>(p, b);
  else
    fused_for_format<Fp8E4m3fnuzFormat>(p, b);
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
