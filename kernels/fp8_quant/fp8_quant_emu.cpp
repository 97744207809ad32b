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
void quantize_group(const Fp8QuantParams& p, std::int64_t row, std::int64_t group, const std::uint16_t* x_group,
                    std::uint8_t* q_group, void* scales, std::uint32_t amax_bits) {
  const Fp8Scale s = fp8_scale_from_amax_bits(amax_bits, p.flavour, p.scale_format);
  for (std::int64_t i = 0; i < p.group_size(); ++i) q_group[i] = fp8_quantize_bf16<Format>(x_group[i], s.inverse);
  fp8_store_scale(scales, fp8_scale_index(row, group, p.rows, p.groups_per_row(), p.layout), s, p.scale_format);
}

std::uint32_t amax_bits_of(const std::uint16_t* x, std::int64_t n) {
  std::uint32_t amax = 0;
  for (std::int64_t i = 0; i < n; ++i) amax = max_u32(amax, bf16_abs_bits(x[i]));
  return amax;
}

template <class Format>
void quantize_row(const Fp8QuantParams& p, std::int64_t row, const std::uint16_t* x_row, std::uint8_t* q_row,
                  void* scales, const std::uint32_t* amax_row) {
  const std::int64_t n = p.group_size();
  for (std::int64_t g = 0; g < p.groups_per_row(); ++g) {
    const std::uint32_t amax = amax_row ? amax_row[g] : amax_bits_of(x_row + g * n, n);
    quantize_group<Format>(p, row, g, x_row + g * n, q_row + g * n, scales, amax);
  }
}

template <class Format>
void fused(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    quantize_row<Format>(p, row, b.x + row * p.cols, b.q + row * p.cols, b.scales, nullptr);
}

template <class Format>
void scale_quant(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    quantize_row<Format>(p, row, b.x + row * p.cols, b.q + row * p.cols, b.scales, b.amax + row * p.groups_per_row());
}

}  // namespace

void fp8_quant_fused_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  if (p.flavour == Fp8Flavour::e4m3fn)
    fused<Fp8E4m3fnFormat>(p, b);
  else
    fused<Fp8E4m3fnuzFormat>(p, b);
}

void fp8_amax_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b) {
  const std::int64_t groups = p.groups_per_row(), n = p.group_size();
#pragma omp parallel for schedule(static) if (p.rows * p.cols >= kParallelElements)
  for (std::int64_t row = 0; row < p.rows; ++row)
    for (std::int64_t g = 0; g < groups; ++g) b.amax[row * groups + g] = amax_bits_of(b.x + row * p.cols + g * n, n);
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

void fp8_quant_row_emu(const Fp8QuantParams& p, std::int64_t row, const std::uint16_t* x_row, std::uint8_t* q,
                       void* scales) {
  if (p.flavour == Fp8Flavour::e4m3fn)
    quantize_row<Fp8E4m3fnFormat>(p, row, x_row, q + row * p.cols, scales, nullptr);
  else
    quantize_row<Fp8E4m3fnuzFormat>(p, row, x_row, q + row * p.cols, scales, nullptr);
}

}  // namespace fb
