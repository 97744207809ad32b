// The wgmma tiles' sizes and their shared-memory layout, host and device code (FB_HD), so a CPU test
// checks that the layout the descriptors read is the one the TMA's swizzle writes
// (tests/kernels/fp8_gemm_test.cpp).
//
// Layout (K-major, 128-byte swizzle, the layout a wgmma descriptor of swizzle mode 1 reads): a
// tile of R rows x 128 K stores row r's 128 bytes at r * 128, its 16-byte chunk c at chunk slot
// c ^ (r % 8); 8 rows make a 1024-byte group (the descriptor's stride). The tile must start on a
// 1024-byte boundary (the hardware takes the XOR from address bits). Until run 47 the tiles were
// unswizzled (8-row x 16-byte core matrices stored as 128 contiguous bytes): the matrix unit's
// reads of 8 core matrices 1024 bytes apart then fell into the same banks.
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

FB_HD constexpr int wgmma_tile_offset(int row, int k) { return row * 128 + (((k / 16) ^ (row % 8)) * 16) + k % 16; }

// The shared-memory address the Tensor Memory Accelerator writes byte `linear` of a box to, under
// its 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B): the 16-byte chunk bits [4, 7) of the offset
// are XORed with its 128-byte line bits [7, 10). With a box of 128-byte rows stored from a
// 1024-byte boundary, byte k of row r is at linear = 128 r + k, and this is wgmma_tile_offset(r, k)
// (tests/kernels/fp8_gemm_test.cpp): the TMA writes the layout the descriptor reads.
FB_HD constexpr int tma_swizzle_128b(int linear) { return linear ^ (((linear >> 7) & 7) << 4); }

}  // namespace fb

namespace fb {

// The staged epilogue (fp8_gemm_wgmma_store.hpp): a consumer warpgroup writes its 64 x tile_n bf16
// tile into shared memory as tile_n / 64 boxes of 64 rows x 64 columns (8 KB each, one 128-byte
// line a row), each in the TMA's 128-byte swizzle, and a TMA store copies every box to C. Element
// (row, col) of the warpgroup's tile lies at this byte offset from the (1024-byte aligned) area.
inline constexpr int kWgmmaStoreBoxCols = 64;
inline constexpr int kWgmmaStoreBoxBytes = kWgmmaTileM * kWgmmaStoreBoxCols * 2;
FB_HD constexpr int wgmma_store_offset(int row, int col) {
  return (col / kWgmmaStoreBoxCols) * kWgmmaStoreBoxBytes + tma_swizzle_128b(row * 128 + (col % kWgmmaStoreBoxCols) * 2);
}
// The same offset for the pair of accumulator registers j, j + 1 (j even) of lane `lane` of warp
// `warp` of the warpgroup (row 16 warp + lane / 4 + 8 ((j / 2) % 2), columns 8 (j / 4) + 2 (lane % 4)
// and one more), written so that the swizzle's XOR is one per register group: the row's low three
// bits are lane / 4 whichever the warp and the half.
FB_HD constexpr int wgmma_store_pair_offset(int warp, int lane, int j) {
  const int row = 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
  const int chunk = (j / 4) % 8;  // the 16-byte chunk of the 128-byte line, before the swizzle
  return (j / 32) * kWgmmaStoreBoxBytes + row * 128 + ((chunk ^ (lane / 4)) << 4) + 4 * (lane % 4);
}

}  // namespace fb
