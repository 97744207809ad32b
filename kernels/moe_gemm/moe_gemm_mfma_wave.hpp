// The exact engine on AMD's matrix units (moe_gemm_mfma.hip): one wave's work, host and device
// (FB_HD), so the CPU tests run the kernels' very code over the whole grid with the instruction
// simulated from its documented layout, and compare the result with the emulation bitwise.
//
// Integer block sums. An e2m1 code is h / 2 with h an integer in [-12, 12] (e2m1_halves), so a
// 32-element block's S_q = sum h_a h_w (|S_q| <= 4608) is an int8 x int8 dot product that an int32
// accumulator forms exactly, in any order: the exactness is the format's and the integer
// arithmetic's, not a property of the hardware's accumulator to be tested (as the fp8 forms on
// NVIDIA must be). The instruction:
//   CDNA3 (gfx940-gfx942, gfx950)  v_mfma_i32_16x16x32_i8: one per block, 8 int8 a lane (64 bits)
//   CDNA1/2 (gfx908, gfx90a)       v_mfma_i32_16x16x16i8: two per block into the same int32 sums,
//                                  4 int8 a lane (the low, then the high half of the same 64 bits)
// Both are 16 x 16 tiles of one wave of 64 lanes with the layout of fp8_gemm_mfma_layout.hpp: lane
// l gives A row l % 16 and B column l % 16 and receives D[4 (l / 16) + r][l % 16], r = 0..3.
// A lane's 8 operand bytes are the 8 codes of one 32-bit word of its row's 16-byte block, word
// l / 16 (codes 8 (l / 16) .. + 7, byte e = code e). The K=32 form takes them as its k = 8 (l / 16)
// + e; the K=16 form's instruction j as k = 4 (l / 16) + b from byte 4 j + b. A and B use the same
// map, so either way the instructions see every code of the block once, paired with the same code
// of the other operand: their sum is S_q (MoeGemmMfma tests simulate both forms).
//
// The wave: A = 16 weight rows of each of kTiles tiles, B = 16 sorted rows of the sort block (a
// chunk), for every 32-K block in ascending K; each lane promotes its 4 sums a tile into its fp32
// accumulators with the canonical mx_block_promote (moe_gemm_math.hpp), so the outputs are the
// emulation's bits. Stage 1: a gate tile and the matching up tile (16 outputs; a lane's two sums
// of one r are one output's gate and up, so SwiGLU runs in registers). Stage 2: two tiles of W2
// rows (32 outputs), Y = w_p * y as the other engines write it.
//
// kLanes: how many of the wave's lanes one call runs, from lane0. The device runs 1 (its own lane;
// the instruction gathers the wave's operands in hardware), the CPU simulation all 64 (the Mma
// policy's block_sums then sees every lane's operands). The arrays of size 1 are registers.
#pragma once

#include <cstdint>

#include "kernels/fp8_gemm/fp8_gemm_mfma_layout.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_fragments.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"

namespace fb {

// Eight e2m1 codes (a 32-bit word, code 0 in the low nibble) as eight int8 h = 2 * value, byte e
// holding code e.
FB_HD std::uint64_t e2m1x8_to_i8x8(std::uint32_t w) {
  std::uint64_t r = 0;
  for (int e = 0; e < 8; ++e) {
    const auto h = static_cast<std::int8_t>(e2m1_halves(w >> (4 * e)));
    r |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(h)) << (8 * e);
  }
  return r;
}

inline constexpr int kMfmaWaveLanes = kMfmaLanes;  // 64
inline constexpr int kMfmaChunkRows = kMfmaTile;   // sorted rows a pass: the instruction's 16 columns
inline constexpr int kMfmaStage1Cols = kMfmaTile;  // outputs of a stage-1 wave (a gate and an up tile)
inline constexpr int kMfmaStage2Cols = 2 * kMfmaTile;  // outputs of a stage-2 wave (two W2 tiles)

// The lane's B row is the sorted row its results belong to (column l % 16 both ways), which the
// wave relies on: a padding row gives a zero operand and its sums are never promoted or stored.
static_assert(kMfmaTile == 16, "the wave maps 16 sorted rows and 16 weight rows a tile");

// One chunk: sorted rows chunk .. chunk + 15 of the sort block against kTiles tiles of 16 weight
// rows (tile t: rows w_rows[t] ..). acc[i][t][r] of lane lane0 + i gets the canonical order over
// every 32-K block of weight row w_rows[t] + mfma_result_row(lane, r) and sorted row chunk +
// mfma_result_col(lane) (0 where that row is padding).
template <int kLanes, int kTiles, class Mma>
FB_HD void moe_mfma_chunk(const MxChunk& ch, int chunk, const std::uint8_t* w, const std::uint8_t* w_scales,
                          const std::int64_t (&w_rows)[kTiles], std::int64_t nb, int lane0,
                          float (&acc)[kLanes][kTiles][4]) {
  const std::uint8_t* x[kLanes];           // the lane's word of its sorted row's blocks (nullptr: padding)
  const std::uint8_t* xs[kLanes];          // that row's scale bytes, less the block part
  const std::uint8_t* wa[kLanes][kTiles];  // the lane's word of its A row's blocks
  const std::uint8_t* ws[kLanes][kTiles];  // the scale row of its result row r = 0 (r: + r * nb)
#pragma unroll
  for (int i = 0; i < kLanes; ++i) {
    const int lane = lane0 + i, group = mfma_operand_group(lane);
    const int row = chunk + mfma_operand_row(lane);
    const std::uint32_t off = ch.offset(row);
    x[i] = off != kPadRow ? ch.act + off + 4 * group : nullptr;
    xs[i] = off != kPadRow ? ch.act_scales + mx_scale_row_part(ch.first + row, ch.pad) : nullptr;
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      wa[i][t] = w + (w_rows[t] + mfma_operand_row(lane)) * ch.row_bytes + 4 * group;
      ws[i][t] = w_scales + (w_rows[t] + mfma_result_row(lane, 0)) * nb;
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][t][r] = 0.0f;
    }
  }
  for (std::int64_t y = 0; y < nb; ++y) {
    std::uint64_t a[kTiles][kLanes], b[kLanes];
#pragma unroll
    for (int i = 0; i < kLanes; ++i) {
      b[i] = x[i] ? e2m1x8_to_i8x8(load_u32(x[i] + 16 * y)) : 0u;  // code 0 is +0: a zero column
#pragma unroll
      for (int t = 0; t < kTiles; ++t) a[t][i] = e2m1x8_to_i8x8(load_u32(wa[i][t] + 16 * y));
    }
    std::int32_t d[kTiles][kLanes][4];  // S_q, exactly
#pragma unroll
    for (int t = 0; t < kTiles; ++t) Mma::block_sums(a[t], b, d[t]);
    const std::uint32_t sb = mx_scale_block_part(y);
#pragma unroll
    for (int i = 0; i < kLanes; ++i) {
      if (!x[i]) continue;  // padding: never stored
      const std::uint8_t sa = xs[i][sb];
#pragma unroll
      for (int t = 0; t < kTiles; ++t)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[i][t][r] = mx_block_promote(acc[i][t][r], d[t][i][r], sa, ws[i][t][r * nb + y]);
    }
  }
}

// One stage-1 wave: sort block at sorted position `first` (entries staged, expert e), outputs
// n0 .. n0 + 15: gate rows e 2I + n0 .., up rows e 2I + I + n0 .., chunks of 16 sorted rows up to the
// block's padding (a prefix of padding ends the live rows).
template <int kLanes, bool kOai, class Mma>
FB_HD void moe_stage1_mfma_wave(const Stage1Args& a, const std::int32_t* entries, std::int64_t first, std::int64_t e,
                                std::int64_t n0, int lane0) {
  const std::int64_t I = a.inter, nb = a.hidden / 32;
  const MxChunk ch{a.xq, a.x_scales, entries, first, a.tokens, a.topk, false, a.hidden / 2, (nb + 7) / 8 * 8};
  const std::int64_t w_rows[2] = {e * 2 * I + n0, e * 2 * I + I + n0};
  for (int chunk = 0; chunk < a.block; chunk += kMfmaChunkRows) {
    if (ch.offset(chunk) == kPadRow) break;  // the same for the whole wave
    float acc[kLanes][2][4];
    moe_mfma_chunk<kLanes, 2, Mma>(ch, chunk, a.w13, a.w13_scales, w_rows, nb, lane0, acc);
#pragma unroll
    for (int i = 0; i < kLanes; ++i) {
      const int lane = lane0 + i;
      const std::int32_t entry = entries[chunk + mfma_result_col(lane)];
      if (moe_entry_token(entry) >= a.tokens) continue;  // padding
      const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
#pragma unroll
      for (int r = 0; r < 4; ++r)
        a.a1[row * I + n0 + mfma_result_row(lane, r)] = bf16_from_float(moe_swiglu(kOai, acc[i][0][r], acc[i][1][r]));
    }
  }
}

// One stage-2 wave: outputs d0 .. d0 + 31 (W2 rows e K + d0 .. and + 16), Y = w_p * y.
template <int kLanes, class Mma>
FB_HD void moe_stage2_mfma_wave(const Stage2Args& a, const std::int32_t* entries, const float* weights,
                                std::int64_t first, std::int64_t e, std::int64_t d0, int lane0) {
  const std::int64_t K = a.hidden, nb = a.inter / 32;
  const MxChunk ch{a.a2q, a.a2_scales, entries, first, a.tokens, a.topk, true, a.inter / 2, (nb + 7) / 8 * 8};
  const std::int64_t w_rows[2] = {e * K + d0, e * K + d0 + kMfmaTile};
  for (int chunk = 0; chunk < a.block; chunk += kMfmaChunkRows) {
    if (ch.offset(chunk) == kPadRow) break;
    float acc[kLanes][2][4];
    moe_mfma_chunk<kLanes, 2, Mma>(ch, chunk, a.w2, a.w2_scales, w_rows, nb, lane0, acc);
#pragma unroll
    for (int i = 0; i < kLanes; ++i) {
      const int lane = lane0 + i, r_sorted = chunk + mfma_result_col(lane);
      const std::int32_t entry = entries[r_sorted];
      if (moe_entry_token(entry) >= a.tokens) continue;  // padding
      const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a.y[row * K + d0 + kMfmaTile * t + mfma_result_row(lane, r)] = weights[r_sorted] * acc[i][t][r];
    }
  }
}

// The instruction's two forms, simulated from the layout (CPU tests): block_sums of a whole wave
// (kLanes = 64). kK32: v_mfma_i32_16x16x32_i8; else two v_mfma_i32_16x16x16i8.
template <bool kK32>
struct MoeMfmaSimulated {
  static void block_sums(const std::uint64_t (&a)[kMfmaWaveLanes], const std::uint64_t (&b)[kMfmaWaveLanes],
                         std::int32_t (&d)[kMfmaWaveLanes][4]);
};

// The grid of moe_stage1_mfma_kernel / moe_stage2_mfma_kernel (moe_gemm_mfma.hip) on the CPU, every
// wave through the functions above with the simulated instruction (kK32 chooses the form). Stage 2
// includes the reduction and the chain's add, as moe_stage2_exact_simulate. Tests only.
void moe_stage1_mfma_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b, bool k32);
void moe_stage2_mfma_simulate(const MoeGemmParams& p, const MoeStage2Buffers& b, bool k32);

}  // namespace fb
