// The wgmma tiles' sizes, their shared-memory layout and the order the staging copies fill it in, host and
// device code (FB_HD), so a CPU test checks that the copies cover every byte of a tile once and
// write it where the layout says (tests/kernels/fp8_gemm_test.cpp).
//
// Layout (no swizzle, K-major, the PTX "canonical" layout): a core matrix is 8 rows of 16 bytes
// (16 fp8 values along K), stored as 128 contiguous bytes. A tile of R rows x 128 K is
// [R / 8 row groups][8 K cores][8 rows][16 bytes]: byte (r, k) at (r/8)*1024 + (k/16)*128 +
// (r%8)*16 + k%16.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

// A warpgroup computes a kWgmmaTileM x kWgmmaTileN tile of C, one kWgmmaTileK block of K at a time
// (one promotion block: 4 k32 steps). Host code reads them too (the general GEMM's kernel choice).
inline constexpr int kWgmmaTileM = 64;
inline constexpr int kWgmmaTileN = 128;
inline constexpr int kWgmmaTileK = 128;
// A CTA (wgmma_pipeline) stacks kWgmmaConsumerGroups warpgroup tiles along M: kWgmmaCtaM x
// kWgmmaTileN of C, sharing each B tile.
inline constexpr int kWgmmaConsumerGroups = 2;
inline constexpr int kWgmmaCtaM = kWgmmaConsumerGroups * kWgmmaTileM;

FB_HD constexpr int wgmma_tile_offset(int row, int k) {
  return (row / 8) * 1024 + (k / 16) * 128 + (row % 8) * 16 + (k % 16);
}

// The 16-byte copy i of a tile's staging: row `row`, K piece `piece` (bytes 16 piece .. + 15 of the
// row's 128), written at tile byte 16 i. Consecutive copies fill one core matrix, so the 8 threads
// of a shared-memory phase write 128 contiguous bytes (every bank once). Until run 41 copy i took
// row i / 8 and piece i % 8: the 8 threads of a phase wrote 128 bytes apart into the same 4 banks.
struct WgmmaCopy {
  int row, piece;
};
FB_HD constexpr WgmmaCopy wgmma_stage_copy(int i) { return WgmmaCopy{8 * (i / 64) + i % 8, (i / 8) % 8}; }

}  // namespace fb
