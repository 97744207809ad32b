// The wgmma tiles' sizes, their shared-memory layout and the order the staging copies fill it in, host and
// device code (FB_HD), so a CPU test checks that the copies cover every byte of a tile once and
// write it where the layout says (tests/kernels/fp8_gemm_test.cpp).
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

// The 16-byte copy i of a tile's staging: row `row`, K piece `piece` (bytes 16 piece .. + 15 of the
// row's 128), written at tile byte `offset`. 8 consecutive copies are one row: 128 contiguous bytes
// read from global memory and the 8 chunk slots of one 128-byte line of shared memory (every bank
// once).
struct WgmmaCopy {
  int row, piece, offset;
};
FB_HD constexpr WgmmaCopy wgmma_stage_copy(int i) {
  return WgmmaCopy{i / 8, i % 8, wgmma_tile_offset(i / 8, 16 * (i % 8))};
}

}  // namespace fb
