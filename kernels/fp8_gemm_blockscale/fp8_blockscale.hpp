// Block-scale fp8 GEMM with deterministic split-K (F7's GEMM):
//   A fp8 [M][K] with 1x128 scales a_scale [M][K/128] (row-major), B fp8 [N][K] with 128x128
//   scales b_scale [N/128][K/128]; the K blocks are cut into S slices, slice s taking blocks
//   [s KB / S, (s + 1) KB / S). Each slice sums its blocks in order into an fp32 value,
//   slice = fma(block_dot, fl(a_s * b_s), slice); the slices are added in slice order into the
//   fp32 buffer `acc` [M][N], which must hold +0 when the GEMM starts (a memset, or the producer
//   of A zeroing it as a side job: F7); the last slice writes C = bf16(acc).
// The order of the slice adds is fixed by a per-tile ticket (a turnstile), so every run gives the
// same bytes. Numeric contract and orders: kernels/fp8_gemm_blockscale/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/codecs/fp8.hpp"

namespace fb {

inline constexpr std::int64_t kBlockscaleBlock = 128;
inline constexpr std::int64_t kBlockscaleMaxSlices = 254;  // ticket values keep one byte per slice

struct Fp8BlockscaleParams {
  std::int64_t rows = 0;   // M
  std::int64_t cols = 0;   // N, a multiple of 128
  std::int64_t depth = 0;  // K, a multiple of 128
  std::int64_t slices = 1;  // S, 1 .. K / 128
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;

  FB_HD std::int64_t k_blocks() const { return depth / kBlockscaleBlock; }
  FB_HD std::int64_t n_blocks() const { return cols / kBlockscaleBlock; }
  FB_HD std::int64_t slice_begin(std::int64_t s) const { return s * k_blocks() / slices; }
  // Tickets the GEMM workspace holds (one per output tile of the plain kernel, the most tiles).
  FB_HD std::int64_t tickets() const { return rows * n_blocks(); }
};

struct Fp8BlockscaleBuffers {
  const std::uint8_t* a = nullptr;  // fp8 [M][K]
  const float* a_scale = nullptr;   // fp32 [M][K/128]
  const std::uint8_t* b = nullptr;  // fp8 [N][K]
  const float* b_scale = nullptr;   // fp32 [N/128][K/128]
  // acc 8-byte and c 4-byte aligned (the wgmma epilogue moves pairs of adjacent columns).
  float* acc = nullptr;             // fp32 [M][N]: +0 on entry (the F7 contract), the sum on exit
  std::uint16_t* c = nullptr;       // bf16 [M][N]
  std::uint32_t* tickets = nullptr;  // GEMM workspace [tickets()]: any content on entry
};

// CPU emulations on the listed rows (all when empty): the canonical order (the plain kernel's,
// bit for bit) and the blocked order (each block's dot exact, rounded once to fp32: what the
// matrix-unit kernel is held to). Both read acc as the kernels do: whatever it holds is the start.
void fp8_blockscale_canonical_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b,
                                  const std::vector<std::int64_t>& rows = {});
void fp8_blockscale_blocked_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b,
                                const std::vector<std::int64_t>& rows = {});

// GPU launchers (kernels/fp8_gemm_blockscale/*.hip). None of them zeroes acc.
void fp8_blockscale_plain_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream);
void fp8_blockscale_wgmma_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream);
std::string fp8_blockscale_wgmma_unavailable(const Fp8BlockscaleParams& p);
// The CTA tile's width the sm_90a launchers take for `p` on this device (direct: the direct form's).
int fp8_blockscale_launch_tile_cols(const Fp8BlockscaleParams& p, bool direct);
// The same kernel in its direct form: C = bf16(+0 + sum) from the registers (S = 1), or with S > 1
// (at most 8: an InputError beyond) a tile's slices on a cluster of S CTAs added in shared memory
// in slice order; acc is neither read nor written (nor needs zeroing), the tickets unused. C is
// the acc form's C bit for bit after a memset, at the same S.
void fp8_blockscale_wgmma_direct_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream);
// wgmma where available, the plain kernel elsewhere.
void fp8_blockscale_general_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream);
// The memset the `memset` variants launch: acc = +0.
void fp8_blockscale_zero_acc_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream);

}  // namespace fb
