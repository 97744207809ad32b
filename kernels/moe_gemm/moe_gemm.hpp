// MoE MXFP4 GEMMs: stage 1 (gather, gate_up GEMM, SwiGLU), stage 2 (down GEMM, slot-ordered
// reduction) and the shared-expert fold (F6). README.md beside this file has the whole contract.
//
// Shapes (m31 at TP4: E = 128, k = 4, K = 6144 hidden, I = 768 intermediate, B = 32):
//   xq        e2m1x2 [T][K/2]          stage-1 activations, row = token (moe_sort_mxfp4/stage1)
//   x_scales  e8m0 swizzled             at sorted positions: byte mx_scale_addr(p, y, Kpad8)
//   w13       e2m1x2 [E][2I][K/2]      rows [0, I) gate, [I, 2I) up; element k of row n in
//                                      byte k/2 (low nibble for even k)
//   w13_s     e8m0 [E][2I][K/32]       one scale per 32 along K, plain row-major
//   a1        bf16 [T*k][I]            stage-1 output, row = token*k + slot
//   a2q       e2m1x2 [T*k][I/2]        stage-2 activations (moe_sort_mxfp4/stage2 of a1)
//   a2_scales e8m0 swizzled             at sorted positions: byte mx_scale_addr(p, y, Ipad8)
//   w2        e2m1x2 [E][K][I/2], w2_s e8m0 [E][K][I/32]
//   out       bf16 [T][K]              out[t] = bf16(sum over slots in order of w_slot * y_slot)
//   shared    bf16 [T][K]              the shared expert's output (F6)
//   y         f32 [T*k][K]             workspace: w_p * y of each routed pair, row = token*k + slot
//
// Params (settings) and Buffers (pointers) for the kernels and their CPU emulation. No HIP, no Eigen.
#pragma once

#include <cstdint>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"

namespace fb {

// Which GEMM engine a launch uses. plain and exact give the same bits (the block sums are exact
// integers):
//   plain  CUDA cores / SIMD lanes: one thread per output column, integer block sums
//   exact  the matrix units: e4m3 mma.sync m16n8k32 on NVIDIA sm_89 and later (an e2m1 code is
//          the e4m3 byte of its value times 2^-6; wgmma engines on sm_90a), integer MFMA on AMD
//          where FUSEBENCH_MOE_MFMA=1 (moe_gemm_mfma.hpp), the plain arithmetic elsewhere
//   fast   not bitwise: each row rescaled by its largest block scale, 128-K partials summed in the
//          matrix unit (moe_gemm_fast.hpp). It differs from exact where the wgmma prefill engine
//          runs (moe_gemm_wgmma.hpp); elsewhere (decode sizes, where the GEMMs stream weights and
//          exactness costs nothing measurable, other devices, shapes it does not tile) its
//          launchers run the exact kernels, whose bits are within fast's bound.
enum class MoeGemmEngine : std::uint8_t { plain, exact, fast };

// How stage 2 ends (F6): no shared expert; chain = reduce to bf16, then a second launch adds the
// shared output and rounds again; fold = the shared output joins the fp32 sum before one rounding.
enum class MoeSharedMode : std::uint8_t { none, chain, fold };

struct MoeGemmParams {
  std::int64_t tokens = 0;   // T
  std::int64_t topk = 0;     // k
  std::int64_t experts = 0;  // E
  std::int64_t block = 32;   // B, the sort block (a multiple of 16)
  std::int64_t hidden = 0;   // K (model dim), a multiple of 32
  std::int64_t inter = 0;    // I (intermediate), a multiple of 32
  bool oai = true;           // stage-1 activation: swiglu_oai, or silu
  MoeGemmEngine engine = MoeGemmEngine::exact;
  MoeSharedMode shared = MoeSharedMode::none;

  std::int64_t pairs() const { return tokens * topk; }
  std::int64_t max_entries() const { return tokens * topk + experts * block - topk; }
  std::int64_t max_blocks() const { return (max_entries() + block - 1) / block; }
  std::int64_t scale_rows() const { return (max_entries() + 31) / 32 * 32; }
  std::int64_t hidden_blocks() const { return hidden / kMxBlock; }
  std::int64_t inter_blocks() const { return inter / kMxBlock; }
  std::int64_t hidden_blocks_pad() const { return (hidden_blocks() + 7) / 8 * 8; }
  std::int64_t inter_blocks_pad() const { return (inter_blocks() + 7) / 8 * 8; }
  // The moe_sort_mxfp4 settings that produce this GEMM's activations.
  MoeSortMxfp4Params sort_params(MoeStage stage) const;
};

struct MoeStage1Buffers {
  const std::int32_t* sorted_token_ids = nullptr;   // [max_entries]
  const std::int32_t* sorted_expert_ids = nullptr;  // [max_blocks]
  const std::int32_t* num_valid_ids = nullptr;      // [2]
  const std::uint8_t* xq = nullptr;                 // e2m1x2 [T][K/2]
  const std::uint8_t* x_scales = nullptr;           // e8m0 swizzled [scale_rows][Kpad8]
  const std::uint8_t* w13 = nullptr;                // e2m1x2 [E][2I][K/2]
  const std::uint8_t* w13_scales = nullptr;         // e8m0 [E][2I][K/32]
  std::uint16_t* a1 = nullptr;                      // bf16 [T*k][I]
  // Workspace of the wgmma prefill engine (GPU): the activation rows converted once at their sorted
  // positions (MoeTokenStageLayout, moe_gemm_wgmma_plan.hpp); null: the engine converts in the kernel.
  std::uint8_t* token_stage = nullptr;
  // The weight rows converted once (MoeWeightStageLayout), where moe_wgmma_stages_weights says; else null.
  std::uint8_t* weight_stage = nullptr;
};

struct MoeStage2Buffers {
  const std::int32_t* sorted_token_ids = nullptr;
  const float* sorted_weights = nullptr;            // [max_entries]
  const std::int32_t* sorted_expert_ids = nullptr;
  const std::int32_t* num_valid_ids = nullptr;
  const std::uint8_t* a2q = nullptr;                // e2m1x2 [T*k][I/2]
  const std::uint8_t* a2_scales = nullptr;          // e8m0 swizzled [scale_rows][Ipad8]
  const std::uint8_t* w2 = nullptr;                 // e2m1x2 [E][K][I/2]
  const std::uint8_t* w2_scales = nullptr;          // e8m0 [E][K][I/32]
  const std::uint16_t* shared = nullptr;            // bf16 [T][K]; null without a shared expert
  float* y = nullptr;                               // workspace f32 [T*k][K] (GPU only)
  std::uint16_t* out = nullptr;                     // bf16 [T][K]
  std::uint8_t* token_stage = nullptr;              // workspace, as stage 1's (the a2q rows)
  std::uint8_t* weight_stage = nullptr;             // workspace, as stage 1's (the W2 rows)
};

// Impossible shapes (InputError with the reason): K or I not a multiple of 32, B not a multiple
// of 16, k >= 256 or k > E, T >= 2^24.
void moe_gemm_validate(const MoeGemmParams& p);

// CPU emulation: the kernels' arithmetic in their canonical order. `token_mask` (T bytes, nonzero =
// compute) restricts the work to some tokens (the check subset); nullptr = every token. Only the
// masked tokens' output rows are written.
void moe_stage1_emu(const MoeGemmParams& p, const MoeStage1Buffers& b, const std::uint8_t* token_mask = nullptr);
void moe_stage2_emu(const MoeGemmParams& p, const MoeStage2Buffers& b, const std::uint8_t* token_mask = nullptr);

// GPU launchers (kernels/moe_gemm/*.hip); they throw DeviceError on a launch failure.
void moe_stage1_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
void moe_stage2_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

// For the exactness test of the matrix units: block sums S_q (quarter units, exact integers) of
// `count` tiles of 16 rows x 8 columns of one 32-element e2m1 block, through the engine's
// block-sum routine (the fp8 mma fragment path on NVIDIA sm_89+). a: [count][16][16] bytes (16 rows),
// b: [count][8][16] bytes (8 columns), sums: int32 [count][16][8]. Device pointers.
// wgmma_shift u in 0..12 (exact engine, fp8 devices): the operands converted as the wgmma prefill
// engine converts them (e2m1x8_to_e4m3x8_by_table; the same permutation of k on both sides), the
// columns times 2^u as its token blocks, on the same m16n8k32 MMA; the sums come back divided by
// 2^u. Without the fp8 unit the shift has nothing to act on (the integer sums come back): callers
// run it where the wgmma engine runs. -1: the mma.sync kernels' own conversion.
void moe_block_sums_launch(MoeGemmEngine engine, const std::uint8_t* a, const std::uint8_t* b, std::int32_t* sums,
                           std::int64_t count, void* stream, int wgmma_shift = -1);

}  // namespace fb
