// SwiGLU and its fp8 producer (F2): bf16 gate_up [T][2d] (gate = columns [0, d), up = [d, 2d)) ->
// bf16 out [T][d], or the down projection's fp8 input [T][d] with per-token or per-1x128 scales
// (optionally the bf16 out as well).
//
// Params (settings) and Buffers (pointers) for the plain SwiGLU kernel (the chain's first member),
// the fused producer, the chain and their CPU emulation. No HIP, no Eigen.
// Numeric contract: docs/numeric-contract.md#swiglu-fp8.
#pragma once

#include <cstdint>

#include "kernels/fp8_quant/fp8_quant.hpp"

namespace fb {

enum class SwigluActivation : std::uint8_t {
  swiglu_oai,  // g = min(gate, 7), u = clamp(up, -7, 7): (g * sigmoid(1.702 g)) * (u + 1)
  silu,        // (gate * sigmoid(gate)) * up
};

struct SwigluFp8Params {
  std::int64_t rows = 0;  // T
  std::int64_t d = 0;     // output columns; the input row holds 2d
  SwigluActivation activation = SwigluActivation::swiglu_oai;
  bool write_out = false;  // the fused producer also writes the bf16 out
  Fp8Granularity granularity = Fp8Granularity::per_token;
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  ScaleLayout layout = ScaleLayout::row_major;
  ScaleFormat scale_format = ScaleFormat::f32;
  // Chunks of 8 values each thread of the fused GPU kernel holds: 0 lets the launcher choose by the
  // grid's size; 3 or 6 force it (tests reach every row shape at small sizes). Results never depend
  // on it.
  int chunks_per_thread = 0;

  // The quant step of the chain: the same options on out [T][d].
  Fp8QuantParams quant() const { return {rows, d, granularity, flavour, layout, scale_format}; }
};

struct SwigluFp8Buffers {
  const std::uint16_t* gate_up = nullptr;  // bf16 [T][2d]
  std::uint16_t* out = nullptr;            // bf16 [T][d]: an output, or the chain's workspace
  std::uint8_t* q = nullptr;               // fp8 [T][d]
  void* scales = nullptr;                  // f32 or e8m0, [T][G] or [G][T]
};

// CPU emulation (same arithmetic as the kernels).
void swiglu_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b);  // the activation alone: out
void swiglu_fp8_fused_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b);
void swiglu_fp8_chain_emu(const SwigluFp8Params& p, const SwigluFp8Buffers& b);

// GPU launchers (kernels/swiglu_fp8/*.hip); they throw DeviceError on a launch failure.
void swiglu_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream);
void swiglu_fp8_fused_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream);
void swiglu_fp8_chain_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream);

}  // namespace fb
