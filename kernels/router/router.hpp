// The MoE router (F3, F4): x bf16 [M][K] times W_gate [E][K] (fp32 or bf16) -> fp32 split-K
// partials [S][M][E] and logits [M][E], then the gate: top-k expert ids [M][k] int32 and their
// weights [M][k] fp32 (sigmoid + bias selection, or softmax).
//
// Params (settings) and Buffers (pointers) for the GEMV, the reduce, the two gate entry points
// (from logits, from partials), the router chain and its fused form, and their CPU emulation.
// No HIP, no Eigen. Canonical orders: router_math.hpp. Numeric contract:
// docs/numeric-contract.md#router-gemv-and-gate.
#pragma once

#include <cstdint>

namespace fb {

enum class RouterWeight : std::uint8_t { f32, bf16 };
enum class RouterGate : std::uint8_t {
  sigmoid_bias,  // p = sigmoid(logit), select by p + bias, weights from p
  softmax,       // p = softmax(logits), select by p, weights from p
};

inline constexpr std::int64_t kRouterMaxTopk = 8;
inline constexpr std::int64_t kRouterLanes = 32;       // virtual lanes of a slice's dot product and of a gate row
inline constexpr std::int64_t kRouterChunk = 8;        // consecutive k one lane takes at a time
inline constexpr std::int64_t kRouterMaxExperts = 256;  // a gate row: at most 8 experts per lane
// Up to this many rows the chain's GEMV sums its own partials into logits (its last block, no
// waiting); past it a reduce launch does. The same order either way.
inline constexpr std::int64_t kRouterReduceLaunchRows = 16;

struct RouterParams {
  std::int64_t rows = 0;       // M (tokens)
  std::int64_t hidden = 6144;  // K
  std::int64_t experts = 128;  // E: a multiple of 32, at most 256
  std::int64_t split_k = 1;    // S: K is cut into S equal slices of K/S (a multiple of 8)
  RouterWeight weight = RouterWeight::f32;
  RouterGate gate = RouterGate::sigmoid_bias;
  std::int64_t topk = 4;       // k, at most 8
  float routed_scaling = 2.0f;

  std::int64_t slice() const { return hidden / split_k; }
  std::int64_t experts_per_lane() const { return experts / kRouterLanes; }
  std::int64_t weight_bytes() const { return experts * hidden * (weight == RouterWeight::f32 ? 4 : 2); }
};

struct RouterBuffers {
  const std::uint16_t* x = nullptr;  // bf16 [M][K]
  const void* w = nullptr;           // fp32 or bf16 [E][K]
  const float* bias = nullptr;       // [E], sigmoid_bias only
  float* partials = nullptr;         // [S][M][E]
  float* logits = nullptr;           // [M][E]
  std::int32_t* topk_ids = nullptr;  // [M][k], in selection order
  float* topk_weights = nullptr;     // [M][k]
};

// Throws InputError naming the problem (E not a multiple of 32, K/S not a multiple of 8, ...).
void router_validate(const RouterParams& p);

// The gate of one row (E logits) on the CPU: the kernels' arithmetic (router_math.hpp).
void router_gate_row_emu(const RouterParams& p, const float* logits, const float* bias, std::int32_t* ids,
                         float* weights);

// CPU emulation, piece by piece (the kernels' arithmetic and order).
void router_gemv_emu(const RouterParams& p, const RouterBuffers& b);          // partials
void router_reduce_emu(const RouterParams& p, const RouterBuffers& b);        // partials -> logits
void router_gate_emu(const RouterParams& p, const RouterBuffers& b);          // logits -> ids, weights
void router_gate_partials_emu(const RouterParams& p, const RouterBuffers& b);  // partials -> logits, ids, weights
// The router case's variants: fused = GEMV + gate from partials; chain = GEMV + reduce + gate
// (at M <= 16 the GEMV's last block does the reduce: same arithmetic).
void router_fused_emu(const RouterParams& p, const RouterBuffers& b);
void router_chain_emu(const RouterParams& p, const RouterBuffers& b);

// GPU launchers (kernels/router/*.hip); they throw DeviceError on a launch failure.
void router_gemv_launch(const RouterParams& p, const RouterBuffers& b, void* stream);         // partials
void router_gemv_logits_launch(const RouterParams& p, const RouterBuffers& b, void* stream);  // + logits (M <= 16 use)
void router_reduce_launch(const RouterParams& p, const RouterBuffers& b, void* stream);
void router_gate_launch(const RouterParams& p, const RouterBuffers& b, void* stream);
void router_gate_partials_launch(const RouterParams& p, const RouterBuffers& b, void* stream);
void router_fused_launch(const RouterParams& p, const RouterBuffers& b, void* stream);
void router_chain_launch(const RouterParams& p, const RouterBuffers& b, void* stream);

}  // namespace fb
