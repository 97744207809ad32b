// The staged epilogue of the wgmma GEMMs (sm_90a): a consumer warpgroup writes its 64 x kTileN bf16
// outputs into shared memory (wgmma_store_pair_offset: boxes of 64 x 64 in the 128-byte swizzle,
// so a warp's 4-byte stores of one register pair hit 32 different banks) and one of its threads
// has the TMA copy the boxes to C, asynchronously: the warpgroup goes on to its next unit's MMAs
// while the copies drain. Rows and columns past C are clipped by the TMA (the map's bounds).
// Why: the register-to-global epilogue wrote 4-byte pairs, 8 rows of 16 bytes per warp
// instruction, and the warpgroup waited for it: about 4 us a 128 x 192 unit at 32768 rows (fitted
// from two K at the same unit count). Run 75 (H100): 1.27-1.43x at 32768 rows where K is 768 or
// 2048, 1.01-1.04x at K = 6144 (kernels/fp8_gemm_blockscale/README.md, "Run 75").
// The bits are the registers' bits: only the path to memory changes.
#pragma once

#include <cstdint>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"

namespace fb {

// Shared memory of the staging areas of a CTA's consumer warpgroups, plus 1024 bytes to align
// them (the swizzle's period).
constexpr int wgmma_store_bytes(int tile_n) {
  return kWgmmaConsumerGroups * (tile_n / kWgmmaStoreBoxCols) * kWgmmaStoreBoxBytes + 1024;
}
// Named barriers 4 and 5 (one per consumer warpgroup): the GEMMs use 1..2 for their own.
inline constexpr int kWgmmaStoreBarrier = 4;

#if FB_WGMMA_AVAILABLE
// Consumer warpgroup g's staging area, from the first byte past the kernel's other shared memory.
template <int kTileN>
__device__ inline std::uint8_t* wgmma_store_area(std::uint8_t* past_the_rest, int g) {
  std::uint8_t* area = past_the_rest + (1024 - smem_address(past_the_rest) % 1024) % 1024;
  return area + g * (kTileN / kWgmmaStoreBoxCols) * kWgmmaStoreBoxBytes;
}
// Before a warpgroup writes its area: its issuing thread waits until the TMA has read the previous
// unit's boxes out of it, and the barrier holds the others until then.
__device__ inline void wgmma_store_wait_area(int g) {
  if (threadIdx.x % kWgmmaThreads == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  named_barrier_sync(kWgmmaStoreBarrier + g, kWgmmaThreads);
}
// Register pair j (j even) of this thread as one bf16x2 word.
__device__ inline void wgmma_store_pair(std::uint8_t* area, int j, std::uint32_t word) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>((threadIdx.x % kWgmmaThreads) / 32);
  *reinterpret_cast<std::uint32_t*>(area + wgmma_store_pair_offset(warp, lane, j)) = word;
}
// After every thread's pairs: the generic-proxy stores are made visible to the TMA (the async
// proxy), the barrier collects them, and thread 0 of the warpgroup copies box b to C at
// (row m0, column n0 + 64 b), then commits the copies as one group.
template <int kTileN>
__device__ inline void wgmma_store_issue(const std::uint8_t* area, const WgmmaTensorMap* c_map, std::int64_t m0,
                                         std::int64_t n0, int g) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  named_barrier_sync(kWgmmaStoreBarrier + g, kWgmmaThreads);
  if (threadIdx.x % kWgmmaThreads != 0) return;
#pragma unroll
  for (int box = 0; box < kTileN / kWgmmaStoreBoxCols; ++box)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     reinterpret_cast<std::uint64_t>(c_map)),
                 "r"(static_cast<int>(n0 + box * kWgmmaStoreBoxCols)), "r"(static_cast<int>(m0)),
                 "r"(smem_address(area + box * kWgmmaStoreBoxBytes))
                 : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// At the kernel's end: the issuing threads wait for their copies to complete (C written) before
// the CTA's shared memory goes away. A no-op in threads that issued none.
__device__ inline void wgmma_store_drain() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
#endif

}  // namespace fb
