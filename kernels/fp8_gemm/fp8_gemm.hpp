// Per-token x per-channel fp8 GEMM (the general GEMM and F8, its small-M weight-streaming kernel):
//   A fp8 [M][K] with one fp32 scale per row (a_scale[M]), B fp8 [N][K] with one fp32 scale per
//   output channel (b_scale[N]); C[m][n] = bf16((acc[m][n] * b_scale[n]) * a_scale[m]), acc the
//   fp32 sum of the exact products A[m][k] * B[n][k] in the canonical order of fp8_gemm_math.hpp.
//
// Params (settings) and Buffers (pointers) for every kernel of the family and their CPU emulation.
// No HIP, no Eigen. Numeric contract: kernels/fp8_gemm/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {

struct Fp8GemmParams {
  std::int64_t rows = 0;  // M (tokens)
  std::int64_t cols = 0;  // N (output channels)
  std::int64_t depth = 0;  // K, a multiple of kFp8GemmChunk
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  std::int64_t row_tile = 0;  // small-M kernel: rows per block (1, 2, 4, 8 or 16); 0: auto (the kernel's rule)
};

struct Fp8GemmBuffers {
  const std::uint8_t* a = nullptr;  // fp8 [M][K]
  const float* a_scale = nullptr;   // fp32 [M]
  const std::uint8_t* b = nullptr;  // fp8 [N][K]
  const float* b_scale = nullptr;   // fp32 [N]
  std::uint16_t* c = nullptr;       // bf16 [M][N]
};

// The rows the small-M kernel takes (F8: the shared expert at decode).
inline constexpr std::int64_t kFp8GemmSmallMMaxRows = 16;

// CPU emulation of the canonical order (the plain and small-M kernels compute exactly this), on
// the listed rows only (every row when `rows` is empty).
void fp8_gemm_canonical_emu(const Fp8GemmParams& p, const Fp8GemmBuffers& b, const std::vector<std::int64_t>& rows = {});
// The emulation of the matrix-unit kernel's structure (fp32 promotion of each 128-K block partial,
// each partial rounded once from its exact value): the value the wgmma variant is checked against.
void fp8_gemm_blocked_emu(const Fp8GemmParams& p, const Fp8GemmBuffers& b, const std::vector<std::int64_t>& rows = {});

// GPU launchers (kernels/fp8_gemm/*.hip); they throw DeviceError on a launch failure.
void fp8_gemm_plain_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
void fp8_gemm_small_m_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
// The matrix-unit kernel (wgmma, sm_90a); throws DeviceError where the device or the build has no
// sm_90a code (fp8_gemm_wgmma_unavailable says why beforehand).
void fp8_gemm_wgmma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
// Why the wgmma kernel cannot run the point on this device (empty: it can).
std::string fp8_gemm_wgmma_unavailable(const Fp8GemmParams& p);
// The matrix-unit kernel for small and medium M (mma.sync e4m3, sm_89+; fp8_gemm_mma.hip): the
// wgmma variant's structure (128-K block partials from the matrix unit, added in K order), any M,
// K % 128 == 0; 16 output columns per CTA and 8 or 16 rows per CTA.
void fp8_gemm_mma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
std::string fp8_gemm_mma_unavailable(const Fp8GemmParams& p);
// Its AMD kernel (fp8_gemm_mfma.hip: CDNA3 fp8 MFMA, e4m3fnuz), which fp8_gemm_mma_launch runs in a
// HIP build; compile-checked, not yet run on a device.
void fp8_gemm_mfma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
std::string fp8_gemm_mfma_unavailable(const Fp8GemmParams& p);
// Past this many rows the general GEMM never runs the mma kernel: its CTAs re-read the weights once
// per 16 rows, the wgmma kernel's once per 128, and since the TMA producer (run 50) wgmma is the
// faster at 1536 x 6144 from M = 192 (run 51: 29.0 us against 39.4).
inline constexpr std::int64_t kFp8GemmMmaMaxRows = 128;
// Whether the general GEMM runs the mma kernel (else wgmma) for M = rows, N = cols: always up to 64
// rows, and up to kFp8GemmMmaMaxRows while wgmma's 64 x 128 warpgroup tiles would fill fewer than
// half the multiprocessors (set from runs 41 and 51 on the H200: kernels/fp8_gemm/README.md).
inline bool fp8_gemm_general_takes_mma(std::int64_t rows, std::int64_t cols, int multiprocessors) {
  if (rows > kFp8GemmMmaMaxRows) return false;
  if (rows <= 64) return true;
  const std::int64_t wgmma_tiles =
      ((cols + kWgmmaTileN - 1) / kWgmmaTileN) * ((rows + kWgmmaTileM - 1) / kWgmmaTileM);
  return 2 * wgmma_tiles < multiprocessors;
}
// The vendor library (cuBLASLt with outer-vector scales), host code in fp8_gemm_vendor.cpp: why it
// cannot run the point (empty: it can), and the launch.
std::string fp8_gemm_vendor_unavailable(const Fp8GemmParams& p);
void fp8_gemm_vendor_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);
// The general GEMM as a model would call it: the mma kernel where fp8_gemm_general_takes_mma, else
// wgmma, where available; the plain kernel elsewhere. Its emulation is fp8_gemm_blocked_emu
// wherever a matrix-unit kernel runs.
void fp8_gemm_general_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream);

}  // namespace fb
