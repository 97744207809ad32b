// The matrix-unit (wgmma, sm_90a) tile machinery of the fp8 GEMMs: one warpgroup (128 threads)
// computes a 64 x 128 tile of fp32 block partials from fp8 operands staged in shared memory.
//
// Everything that names a Hopper instruction sits behind FB_WGMMA_AVAILABLE, true only when nvcc
// compiles for sm_90a (the arch-specific feature set); other targets (plain sm_90, other NVIDIA
// archs, hipcc) compile the same kernels with empty bodies, and the launchers refuse to run them
// (fp8_gemm_wgmma_unavailable), so nothing silently runs an empty kernel.
//
// Shared-memory layout: fp8_gemm_wgmma_layout.hpp. Descriptor: leading byte offset (next core
// along K) 128, stride byte offset (next 8-row group) 1024; the k32 step s starts 256 s bytes in.
// Accumulator fragment of m64nNk32 (f32): thread (warp w, lane l) holds d[j], j < N/2, for row
// 16 w + l/4 + 8 ((j/2) % 2) and column 8 (j/4) + 2 (l%4) + j%2.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FB_WGMMA_AVAILABLE 1
#else
#define FB_WGMMA_AVAILABLE 0
#endif

namespace fb {

inline constexpr int kWgmmaThreads = 128;  // one warpgroup
// Tile sizes (kWgmmaTileM, N, K): fp8_gemm_wgmma_layout.hpp.
inline constexpr int kWgmmaAccRegs = kWgmmaTileN / 2;

// Row and column (within the 64 x 128 tile) of accumulator register j of this thread.
__device__ inline int wgmma_acc_row(int j) {
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  return 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
}
__device__ inline int wgmma_acc_col(int j) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  return 8 * (j / 4) + 2 * (lane % 4) + (j % 2);
}

// The shared memory of the double-buffered block loop (wgmma_block_loop): two stages of an A
// (64 x 128) and a B (128 x 128) tile, 48 KB, the most a block may declare statically.
inline constexpr int kWgmmaStageBytes = (kWgmmaTileM + kWgmmaTileN) * kWgmmaTileK;
inline constexpr int kWgmmaLoopBytes = 2 * kWgmmaStageBytes;

// 16 bytes global -> shared without passing through registers (cp.async, sm_80+), zeros where
// !valid (a source size of 0 reads nothing). Complete for this thread after cp_async_wait.
__device__ inline void cp_async16(std::uint8_t* dst, const std::uint8_t* src, bool valid) {
#if FB_WGMMA_AVAILABLE
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src), "r"(valid ? 16 : 0) : "memory");
#else
  (void)dst, (void)src, (void)valid;
#endif
}
__device__ inline void cp_async_commit() {
#if FB_WGMMA_AVAILABLE
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ inline void cp_async_wait() {
#if FB_WGMMA_AVAILABLE
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Stages rows [row0, row0 + R) x K [k0, k0 + 128) of a row-major fp8 matrix with `rows` rows and
// row length `depth` into `tile` (layout above) by cp.async, 16 bytes a copy; rows past the end are
// zeros. The bytes are there once this thread's group completes (cp_async_wait). Copy i is
// wgmma_stage_copy(i), at tile byte 16 i.
template <int R>
__device__ inline void wgmma_stage_tile_async(std::uint8_t* tile, const std::uint8_t* src, std::int64_t rows,
                                              std::int64_t depth, std::int64_t row0, std::int64_t k0) {
  constexpr int kVectors = R * kWgmmaTileK / 16;
#pragma unroll
  for (int i = static_cast<int>(threadIdx.x); i < kVectors; i += kWgmmaThreads) {
    const WgmmaCopy c = wgmma_stage_copy(i);
    const bool valid = row0 + c.row < rows;
    cp_async16(tile + 16 * i, valid ? src + (row0 + c.row) * depth + k0 + c.piece * 16 : src, valid);
  }
}

#if FB_WGMMA_AVAILABLE
__device__ inline std::uint64_t wgmma_descriptor(const std::uint8_t* smem) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(smem));
  std::uint64_t desc = (address & 0x3FFFFu) >> 4;
  desc |= static_cast<std::uint64_t>(128 >> 4) << 16;   // leading byte offset: next core along K
  desc |= static_cast<std::uint64_t>(1024 >> 4) << 32;  // stride byte offset: next 8-row group
  return desc;  // base offset 0, no swizzle
}

// d = A(64 x 32) B(128 x 32)^T (+ d when accumulate != 0), fp8 e4m3 operands, fp32 accumulators.
__device__ inline void wgmma_m64n128k32_e4m3(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
#endif

#if FB_WGMMA_AVAILABLE
// Ties the accumulator registers to this point of the program: the compiler sees each register
// read and written here, so it cannot move their uses above a wgmma wait (the asm statements that
// issue and wait are ordered among themselves, but ordinary arithmetic on their outputs is not).
__device__ inline void wgmma_fence_registers(float* d) {
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) asm volatile("" : "+f"(d[j])::"memory");
}
#endif

// The staged 64 x 128 (A) and 128 x 128 (B) tiles' product into `block` (overwritten, not added):
// four k32 steps, the first from zero. The caller has staged both tiles with ordinary stores; the
// fence makes them visible to the matrix unit (the async proxy) before the barrier.
__device__ inline void wgmma_block_product(float* block, const std::uint8_t* tile_a, const std::uint8_t* tile_b) {
#if FB_WGMMA_AVAILABLE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  wgmma_fence_registers(block);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < kWgmmaTileK / 32; ++s)
    wgmma_m64n128k32_e4m3(block, wgmma_descriptor(tile_a + 256 * s), wgmma_descriptor(tile_b + 256 * s), s > 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  wgmma_fence_registers(block);  // the partials are read only after the wait
  __syncthreads();                // the tiles may be overwritten after this
#else
  (void)block;
  (void)tile_a;
  (void)tile_b;
#endif
}

// The K loop of a 64 x 128 tile over 128-K blocks [kb_begin, kb_end), double-buffered: block
// kb + 1's tiles are copied by cp.async while block kb's product and promotion run.
// promote(kb, block) gets each block's partial in increasing kb, so the arithmetic (and the
// emulation) is that of the one-stage loop; only when the bytes reach shared memory changes.
// Buffer reuse: the copies into a stage are issued after the trailing barrier of the product that
// last read it (wgmma_block_product ends with one), and a stage is read only after every thread's
// copies into it completed (cp_async_wait, then the product's fence and barrier).
template <class Promote>
__device__ inline void wgmma_block_loop(std::uint8_t* stages, const std::uint8_t* a, std::int64_t rows,
                                        const std::uint8_t* bm, std::int64_t cols, std::int64_t depth,
                                        std::int64_t m0, std::int64_t n0, std::int64_t kb_begin,
                                        std::int64_t kb_end, float* block, Promote&& promote) {
  constexpr int kA = kWgmmaTileM * kWgmmaTileK;
  auto issue = [&](std::int64_t kb) {
    if (kb < kb_end) {
      std::uint8_t* stage = stages + ((kb - kb_begin) % 2) * kWgmmaStageBytes;
      wgmma_stage_tile_async<kWgmmaTileM>(stage, a, rows, depth, m0, kb * kWgmmaTileK);
      wgmma_stage_tile_async<kWgmmaTileN>(stage + kA, bm, cols, depth, n0, kb * kWgmmaTileK);
    }
    cp_async_commit();  // an empty group past the end keeps the wait count below uniform
  };
  issue(kb_begin);
  for (std::int64_t kb = kb_begin; kb < kb_end; ++kb) {
    issue(kb + 1);
    cp_async_wait<1>();  // block kb's copies are done; block kb + 1's may still be in flight
    const std::uint8_t* stage = stages + ((kb - kb_begin) % 2) * kWgmmaStageBytes;
    wgmma_block_product(block, stage, stage + kA);
    promote(kb, block);
  }
}

}  // namespace fb
