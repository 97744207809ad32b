// CPU emulation of fp8 activation quant: the fused single pass and the two chain kernels, with
// the kernels' arithmetic (fp8_quant_math.hpp). Groups are independent; rows run in parallel.
#include "kernels/fp8_quant/fp8_quant.hpp"
#include "kernels/fp8_quant/fp8_quant_math.hpp"

namespace fb {
namespace {

// Below this many elements a thread team costs more than it saves (and on a loaded machine a
// barrier can wait a whole scheduler slice).
constexpr std::int64_t kParallelElements = 1 << 16;

template <class Format>
void quantize_group(const Fp8QuantParams& p, const Fp8QuantBuffers& b, std::int64_t row, std::int64_t group,
                    std::uint32_t amax_bits) {
  const std::int64_t n = p.group_size();
  const std::int64_t begin = row * p.cols + group * n;
  const Fp8Scale s = fp8_scale_from_amax_bits(amax_bits, p.flavour, p.scale_format);
  for (std::int64_t i = begin; i < begin + n; ++i) b.q[i] = fp8_quantize_bf16<Format>(b.x[i], s.inverse);
  fp8_store_scale(b.scales, fp8_scale_index(row, group, p.rows, p.groups_per_row(), p.layout), s, p.scale_format);
}

std::uint32_t amax_of(const Fp8QuantParams& p, const Fp8QuantBuffers& b, std::int64_t row, std::int64_t group) {
  const std::int64_t n = p.group_size();
  const std::uint16_t* x = b.x + row * p.cols + group * n;
  std::uint32_t amax = 0;
  for (std::int64_t i = 0; i < n; ++i) amax = max_u32(amax, bf16_abs_bits(x[i]));
  return amax;
}

template <class Format>
void fused(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  const std::int64_t groups = p.groups_per_row();
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    for (std::int64_t g = 0; g < groups; ++g) quantize_group<Format>(p, b, row, g, amax_of(p, b, row, g));
}

template <class Format>
void scale_quant(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  const std::int64_t groups = p.groups_per_row();
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    for (std::int64_t g = 0; g < groups; ++g) quantize_group<Format>(p, b, row, g, b.amax[row * groups + g]);
}

}  // namespace

void fp8_quant_fused_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  if (p.flavour == Fp8Flavour::e4m3fn)
    fused<Fp8E4m3fnFormat>(p, b);
  else
    fused<Fp8E4m3fnuzFormat>(p, b);
}

void fp8_amax_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  const std::int64_t groups = p.groups_per_row();
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    for (std::int64_t g = 0; g < groups; ++g) b.amax[row * groups + g] = amax_of(p, b, row, g);
}

void fp8_scale_quant_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  if (p.flavour == Fp8Flavour::e4m3fn)
    scale_quant<Fp8E4m3fnFormat>(p, b);
  else
    scale_quant<Fp8E4m3fnuzFormat>(p, b);
}

void fp8_quant_chain_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  fp8_amax_emu(p, b);
  fp8_scale_quant_emu(p, b);
}

}  // namespace fb
