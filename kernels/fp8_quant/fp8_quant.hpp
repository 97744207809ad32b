// fp8 activation quant (F9): bf16 [M][K] -> fp8 [M][K] plus scales, per token or per 1x128 group.
//
// Params (settings) and Buffers (pointers) for the fused kernel, its chain and their CPU emulation.
// No HIP, no Eigen: this header is included by .hip, emulation and case files alike.
// Numeric contract: docs/numeric-contract.md#fp8-activation-quant.
#pragma once

#include <cstdint>

#include "reference/codecs/fp8.hpp"

namespace fb {

enum class Fp8Granularity : std::uint8_t { per_token, per_1x128 };
enum class ScaleLayout : std::uint8_t { row_major, k_major };  // [M][G] or [G][M]
enum class ScaleFormat : std::uint8_t { f32, e8m0 };

inline constexpr std::int64_t kFp8GroupSize = 128;

struct Fp8QuantParams {
  std::int64_t rows = 0;  // M
  std::int64_t cols = 0;  // K
  Fp8Granularity granularity = Fp8Granularity::per_token;
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  ScaleLayout layout = ScaleLayout::row_major;
  ScaleFormat scale_format = ScaleFormat::f32;

  std::int64_t group_size() const { return granularity == Fp8Granularity::per_token ? cols : kFp8GroupSize; }
  std::int64_t groups_per_row() const { return cols / group_size(); }
  std::int64_t scale_count() const { return rows * groups_per_row(); }
};

struct Fp8QuantBuffers {
  const std::uint16_t* x = nullptr;  // bf16 [M][K]
  std::uint8_t* q = nullptr;         // fp8 [M][K]
  void* scales = nullptr;            // f32 or e8m0 bytes, [M][G] or [G][M]
  std::uint32_t* amax = nullptr;     // chain workspace: amax bits per group, [M][G]
};

// CPU emulation (same arithmetic and order as the kernels).
void fp8_quant_fused_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b);
void fp8_amax_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b);
void fp8_scale_quant_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b);
void fp8_quant_chain_emu(const Fp8QuantParams& p, const Fp8QuantBuffers& b);
// One row: the epilogue every fp8 producer's emulation ends with (x_row: the row's bf16 values).
void fp8_quant_row_emu(const Fp8QuantParams& p, std::int64_t row, const std::uint16_t* x_row, std::uint8_t* q,
                       void* scales);

// GPU launchers (kernels/fp8_quant/*.hip); they throw DeviceError on a launch failure.
void fp8_quant_fused_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream);
void fp8_amax_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream);
void fp8_scale_quant_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream);
void fp8_quant_chain_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream);

}  // namespace fb
