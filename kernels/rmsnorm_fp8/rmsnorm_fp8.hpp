// Gemma RMSNorm (+ residual add) and its fp8 producer (F1): bf16 x [M][H] (+ residual [M][H]) and
// weight [H] -> residual_out bf16, fp8 q [M][H] with per-token or per-1x128 scales, optionally the
// bf16 out as well.
//
// Params (settings) and Buffers (pointers) for the plain norm kernel (the chain's first member), the
// fused producer, the chain and their CPU emulation. No HIP, no Eigen.
// Numeric contract: docs/numeric-contract.md#gemma-rmsnorm-fp8.
#pragma once

#include <cstdint>

#include "kernels/fp8_quant/fp8_quant.hpp"

namespace fb {

struct RmsnormFp8Params {
  std::int64_t rows = 0;     // M
  std::int64_t hidden = 0;   // H
  bool residual = true;      // s = x + residual, and residual_out = bf16(s)
  float weight_offset = 1.0f;  // 1: Gemma, y = (s * r) * (1 + w); 0: standard, y = (s * r) * w
  float eps = 1e-6f;
  bool write_out = false;    // the fused producer also writes the bf16 out
  Fp8Granularity granularity = Fp8Granularity::per_token;
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  ScaleLayout layout = ScaleLayout::row_major;
  ScaleFormat scale_format = ScaleFormat::f32;

  // The quant step of the chain: the same options on out [M][H].
  Fp8QuantParams quant() const { return {rows, hidden, granularity, flavour, layout, scale_format}; }
};

struct RmsnormFp8Buffers {
  const std::uint16_t* x = nullptr;         // bf16 [M][H]
  const std::uint16_t* residual = nullptr;  // bf16 [M][H], null without residual
  const std::uint16_t* weight = nullptr;    // bf16 [H]
  std::uint16_t* residual_out = nullptr;    // bf16 [M][H], null without residual
  std::uint16_t* out = nullptr;             // bf16 [M][H]: an output, or the chain's workspace
  std::uint8_t* q = nullptr;                // fp8 [M][H]
  void* scales = nullptr;                   // f32 or e8m0, [M][G] or [G][M]
};

// CPU emulation (same arithmetic and order as the kernels).
void rmsnorm_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b);  // the norm alone: out
void rmsnorm_fp8_fused_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b);
void rmsnorm_fp8_chain_emu(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b);

// GPU launchers (kernels/rmsnorm_fp8/*.hip); they throw DeviceError on a launch failure.
void rmsnorm_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream);
void rmsnorm_fp8_fused_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream);
void rmsnorm_fp8_chain_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream);

}  // namespace fb
