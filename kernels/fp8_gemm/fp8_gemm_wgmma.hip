// The general per-token x per-channel fp8 GEMM on the matrix units (wgmma, sm_90a): a persistent CTA
// (one per SM) computes 128 x 128 tiles of C in turn (128 x 192 from 4096 rows where N % 192 == 0:
// fp8_gemm_tile_width.hpp), two consumer warpgroups of 64 rows each fed by
// a TMA producer (wgmma_pipeline, 4 stages) that runs on into the next tile during a tile's
// epilogue. For each 128-K block in order the matrix unit forms a warpgroup's partial (4 k32 steps
// from zero), promoted into fp32 registers on the CUDA cores:
// acc = acc + partial, blocks in increasing K. The epilogue is the canonical one. Only the
// partials' internal accumulation differs from the blocked emulation (fp8_gemm_blocked_emu); see
// fp8_gemm_bounds.hpp for the bound.
// Until run 46 a CTA was one warpgroup of 64 x 128, double-buffered, with two barriers per block;
// until run 50 the producer was a warpgroup of cp.async copies; until run 53 a CTA took one tile.
// Deterministic: a fixed instruction sequence with no atomics, so the same bytes on every run of
// one device.
#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_tile_width.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_store.hpp"

namespace fb {
namespace {

// The scales of one consumer warpgroup's unit in shared memory: 64 row scales, then kTileN column
// scales.
constexpr int gemm_scale_floats(int tile_n) { return kWgmmaTileM + tile_n; }
// The pipeline's bytes, then two buffers (by unit parity) of each consumer warpgroup's scales.
constexpr int gemm_scale_area_end(int tile_n) {
  return wgmma_pipeline_bytes(tile_n) + 2 * kWgmmaConsumerGroups * gemm_scale_floats(tile_n) * 4;
}
// Then the staged epilogue's areas (fp8_gemm_wgmma_store.hpp).
constexpr int gemm_smem_bytes(int tile_n) { return gemm_scale_area_end(tile_n) + wgmma_store_bytes(tile_n); }

// Persistent: CTA c takes tiles c, c + G, ... (G = gridDim.x, at most one CTA per SM), N fastest, so
// the CTAs in flight at any time share each A tile through L2 as a one-tile-per-CTA grid would.
// kTileN: 128, or the wide tile's 192 (fp8_gemm_wgmma_tile_cols, fp8_gemm_tile_width.hpp).
template <int kTileN>
__global__ __launch_bounds__(kWgmmaCtaThreads, 1) void fp8_gemm_wgmma_kernel(Fp8GemmParams p, Fp8GemmBuffers b,
                                                                       const FB_GRID_CONSTANT WgmmaOperands maps,
                                                                       const FB_GRID_CONSTANT WgmmaTensorMap c_map,
                                                                       bool staged) {
#if FB_WGMMA_AVAILABLE
  extern __shared__ __align__(128) std::uint8_t smem[];
  constexpr int kAccRegs = wgmma_acc_regs(kTileN), kScaleFloats = gemm_scale_floats(kTileN);
  const std::int64_t n_tiles = (p.cols + kTileN - 1) / kTileN;
  const std::int64_t tiles = n_tiles * ((p.rows + kWgmmaCtaM - 1) / kWgmmaCtaM);
  const auto unit = [&](int i, WgmmaUnit& w) {
    const std::int64_t t = blockIdx.x + static_cast<std::int64_t>(i) * gridDim.x;
    w = WgmmaUnit{(t / n_tiles) * kWgmmaCtaM, (t % n_tiles) * kTileN, 0, p.depth / kWgmmaTileK};
    return t < tiles;
  };
  float acc[kAccRegs];
  // Each consumer warpgroup copies its unit's 64 row scales and kTileN column scales into shared
  // memory (cp.async) when the unit starts, so they have arrived by its epilogue. Two buffers by
  // unit parity: a thread's next unit writes the other one, and it can only come back to this one
  // after the barrier of the next epilogue, which every reader of this one passes first.
  const int g = wgmma_consumer_group(), t = static_cast<int>(threadIdx.x % kWgmmaThreads);
  auto* scales = reinterpret_cast<float*>(smem + wgmma_pipeline_bytes(kTileN));
  int units_done = 0;
  const auto unit_scales = [&] { return scales + ((units_done % 2) * kWgmmaConsumerGroups + g) * kScaleFloats; };
  const auto start = [&](const WgmmaUnit& w) {
#pragma unroll
    for (int j = 0; j < kAccRegs; ++j) acc[j] = 0.0f;
    float* s = unit_scales();
    const std::int64_t m = w.m0 + static_cast<std::int64_t>(g) * kWgmmaTileM + t;
    // Columns and rows past C read scale 0 (their outputs are never written).
#pragma unroll
    for (int c = t; c < kTileN; c += kWgmmaThreads) {
      if (w.n0 + c < p.cols)
        cp_async_4(s + kWgmmaTileM + c, b.b_scale + w.n0 + c);
      else
        s[kWgmmaTileM + c] = 0.0f;
    }
    if (t < kWgmmaTileM && m < p.rows)
      cp_async_4(s + t, b.a_scale + m);
    else if (t < kWgmmaTileM)
      s[t] = 0.0f;
  };
  const auto promote = [&](std::int64_t, const float* partial) {
#pragma unroll
    for (int j = 0; j < kAccRegs; ++j) acc[j] = acc[j] + partial[j];
  };
  const auto finish = [&](const WgmmaUnit& w) {
    cp_async_wait_all();
    named_barrier_sync(1 + g, kWgmmaThreads);
    const float* s = unit_scales();
    ++units_done;
    const std::int64_t m0 = w.m0 + static_cast<std::int64_t>(g) * kWgmmaTileM;  // this warpgroup's rows
    const std::int64_t m_lo = m0 + wgmma_acc_row(0);
    const std::int64_t m_hi = m_lo + 8;  // registers j with (j / 2) % 2 == 1
    const float as_lo = s[wgmma_acc_row(0)], as_hi = s[wgmma_acc_row(0) + 8];
    const float* col_scales = s + kWgmmaTileM;
    if (staged) {
      // Through shared memory and the TMA (fp8_gemm_wgmma_store.hpp), every tile: the TMA clips
      // rows and columns past C (their column scales are 0 and nothing of them is written).
      if (m0 >= p.rows) return;
      std::uint8_t* area = wgmma_store_area<kTileN>(smem + gemm_scale_area_end(kTileN), g);
      wgmma_store_wait_area(g);
#pragma unroll
      for (int q = 0; q < kAccRegs / 4; ++q) {  // the fast path's arithmetic below, to shared memory
        const float2 bs = *reinterpret_cast<const float2*>(col_scales + wgmma_acc_col(4 * q));
        const float lo0 = (acc[4 * q] * bs.x) * as_lo, lo1 = (acc[4 * q + 1] * bs.y) * as_lo;
        const float hi0 = (acc[4 * q + 2] * bs.x) * as_hi, hi1 = (acc[4 * q + 3] * bs.y) * as_hi;
        wgmma_store_pair(area, 4 * q, bf16x2_from_float(lo0, lo1));
        wgmma_store_pair(area, 4 * q + 2, bf16x2_from_float(hi0, hi1));
      }
      wgmma_store_issue<kTileN>(area, &c_map, m0, w.n0, g);
      return;
    }
    if (m0 + kWgmmaTileM <= p.rows && w.n0 + kTileN <= p.cols && p.cols % 2 == 0) {
      // This warpgroup's 64 x kTileN inside C (at the m31 shapes, every warpgroup with rows in C from
      // M = 64 on): no bounds, a pair of columns per
      // conversion (cvt.rn.bf16x2.f32, the same bits as fp8_gemm_epilogue's rounding) and per
      // 4-byte store, the column offsets constants. Run 61's profile put this thread's epilogue
      // at about 19 instructions an element before (the scalar rounding and the bounds).
      auto* out_lo = reinterpret_cast<std::uint32_t*>(b.c + m_lo * p.cols + w.n0) + wgmma_acc_col(0) / 2;
      auto* out_hi = out_lo + 4 * p.cols;  // 8 rows down, in 4-byte pairs
#pragma unroll
      for (int q = 0; q < kAccRegs / 4; ++q) {  // registers 4q .. 4q + 3: columns wgmma_acc_col(4q) + {0, 1}, rows lo and hi
        const float2 bs = *reinterpret_cast<const float2*>(col_scales + wgmma_acc_col(4 * q));
        const float lo0 = (acc[4 * q] * bs.x) * as_lo, lo1 = (acc[4 * q + 1] * bs.y) * as_lo;
        const float hi0 = (acc[4 * q + 2] * bs.x) * as_hi, hi1 = (acc[4 * q + 3] * bs.y) * as_hi;
        out_lo[4 * q] = bf16x2_from_float(lo0, lo1);
        out_hi[4 * q] = bf16x2_from_float(hi0, hi1);
      }
      return;
    }
    // Edge tiles: registers j and j + 1 are adjacent columns of one row: one 4-byte store where
    // the row's elements are 4-byte aligned (N even), else two 2-byte ones.
#pragma unroll
    for (int j = 0; j < kAccRegs; j += 2) {
      const bool hi_row = (j / 2) % 2 != 0;
      const std::int64_t m = hi_row ? m_hi : m_lo, n = w.n0 + wgmma_acc_col(j);
      if (m >= p.rows || n >= p.cols) continue;
      const float as = hi_row ? as_hi : as_lo;
      const std::uint16_t lo = fp8_gemm_epilogue(acc[j], col_scales[wgmma_acc_col(j)], as);
      if (n + 1 < p.cols) {
        const std::uint16_t hi = fp8_gemm_epilogue(acc[j + 1], col_scales[wgmma_acc_col(j) + 1], as);
        if (p.cols % 2 == 0)
          *reinterpret_cast<std::uint32_t*>(b.c + m * p.cols + n) = lo | (static_cast<std::uint32_t>(hi) << 16);
        else
          b.c[m * p.cols + n] = lo, b.c[m * p.cols + n + 1] = hi;
      } else {
        b.c[m * p.cols + n] = lo;
      }
    }
  };
  wgmma_pipeline<kTileN>(smem, maps, p.rows, unit, start, promote, finish);
  if (staged) wgmma_store_drain();
#else
  (void)p;
  (void)b;
  (void)maps;
  (void)c_map;
  (void)staged;
#endif
}

}  // namespace

std::string fp8_gemm_wgmma_unavailable(const Fp8GemmParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only";
  if (p.depth % kWgmmaTileK != 0) return "the wgmma kernel needs K % 128 == 0";
  return wgmma_device_unavailable();
}

namespace {

template <int kTileN>
void launch_tiles(const Fp8GemmParams& p, const Fp8GemmBuffers& b, hipStream_t stream) {
  constexpr int kBytes = gemm_smem_bytes(kTileN);
  wgmma_pipeline_allow_smem<fp8_gemm_wgmma_kernel<kTileN>, kBytes>();
  const std::int64_t tiles = ((p.cols + kTileN - 1) / kTileN) * ((p.rows + kWgmmaCtaM - 1) / kWgmmaCtaM);
  // Persistent: at most one CTA per SM (run 53b: 1.08-1.18x over one CTA per tile at 32768 rows).
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, device_multiprocessors()));
  const WgmmaOperands maps = wgmma_operands(b.a, p.rows, b.b, p.cols, p.depth, kTileN);
  const bool staged = wgmma_launch_epilogue_staged(p.cols) && wgmma_output_map_fits(b.c, p.cols);
  const WgmmaTensorMap c_map = staged ? wgmma_output_map(b.c, p.rows, p.cols) : WgmmaTensorMap{};
  fp8_gemm_wgmma_kernel<kTileN><<<grid, kWgmmaCtaThreads, kBytes, stream>>>(p, b, maps, c_map, staged);
  gpu_check_launch("fp8_gemm_wgmma_kernel");
}

}  // namespace

void fp8_gemm_wgmma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (const std::string why = fp8_gemm_wgmma_unavailable(p); !why.empty()) throw DeviceError("fp8_gemm_wgmma: " + why);
  if (p.rows == 0 || p.cols == 0) return;
  const auto s = static_cast<hipStream_t>(stream);
  if (fp8_gemm_launch_tile_cols(p.rows, p.cols) == kWgmmaWideTileN)
    launch_tiles<kWgmmaWideTileN>(p, b, s);
  else
    launch_tiles<kWgmmaTileN>(p, b, s);
}

void fp8_gemm_general_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  // On AMD the mma variant is the MFMA kernel, which no device has run yet: the layer keeps the
  // plain kernel there until an AMD run verifies and times it (fp8_gemm/README.md).
#if defined(__HIPCC__)
  constexpr bool kMatrixUnitsHere = false;
#else
  constexpr bool kMatrixUnitsHere = true;
#endif
  if (kMatrixUnitsHere && fp8_gemm_general_takes_mma(p.rows, p.cols, device_multiprocessors()) &&
      fp8_gemm_mma_unavailable(p).empty())
    fp8_gemm_mma_launch(p, b, stream);
  else if (fp8_gemm_wgmma_unavailable(p).empty())
    fp8_gemm_wgmma_launch(p, b, stream);
  else
    fp8_gemm_plain_launch(p, b, stream);
}

}  // namespace fb
