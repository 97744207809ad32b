// The matrix-unit (wgmma, sm_90a) tile machinery of the fp8 GEMMs: a warp-specialised CTA whose
// producer streams fp8 tiles into shared memory by TMA (one thread, one instruction per tile), and
// whose two consumer warpgroups (128 threads each) form 64 x 128 fp32 block partials on the matrix
// unit and promote them on the CUDA cores (wgmma_pipeline).
//
// Everything that names a Hopper instruction sits behind FB_WGMMA_AVAILABLE, true only when nvcc
// compiles for sm_90a (the arch-specific feature set); other targets (plain sm_90, other NVIDIA
// archs, hipcc) compile the same kernels with empty bodies, and the launchers refuse to run them
// (fp8_gemm_wgmma_unavailable), so nothing silently runs an empty kernel.
//
// Shared-memory layout: fp8_gemm_wgmma_layout.hpp (128-byte swizzle). Descriptor: swizzle mode 1
// (128 bytes), stride byte offset (next 8-row group) 1024, leading byte offset unused (the k32
// step's 32 bytes lie inside one swizzled row); the k32 step s starts 32 s bytes in.
// Accumulator fragment of m64nNk32 (f32): thread (warp w, lane l) holds d[j], j < N/2, for row
// 16 w + l/4 + 8 ((j/2) % 2) and column 8 (j/4) + 2 (l%4) + j%2.
#pragma once

#include <cstdint>

#include "kernels/common/gpu_check.hpp"
#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_tma.hpp"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FB_WGMMA_AVAILABLE 1
#else
#define FB_WGMMA_AVAILABLE 0
#endif

namespace fb {

inline constexpr int kWgmmaThreads = 128;  // one warpgroup
// Tile sizes (kWgmmaTileM, N, K): fp8_gemm_wgmma_layout.hpp.
inline constexpr int kWgmmaAccRegs = kWgmmaTileN / 2;
// The accumulator registers a thread holds for a 64 x tile_n tile.
constexpr int wgmma_acc_regs(int tile_n) { return tile_n / 2; }

// Row and column (within its warpgroup's 64 x 128 tile) of accumulator register j of this thread.
__device__ inline int wgmma_acc_row(int j) {
  const int warp = static_cast<int>((threadIdx.x % kWgmmaThreads) / 32), lane = static_cast<int>(threadIdx.x % 32);
  return 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
}
__device__ inline int wgmma_acc_col(int j) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  return 8 * (j / 4) + 2 * (lane % 4) + (j % 2);
}

// The warp-specialised CTA (wgmma_pipeline): kWgmmaConsumerGroups consumer warpgroups (64 rows
// of the CTA tile each) and one producer warpgroup; kWgmmaStages stages of an A (kWgmmaCtaM x 128)
// and a B (128 x 128) tile, then a full and an empty mbarrier per stage.
inline constexpr int kWgmmaCtaThreads = (kWgmmaConsumerGroups + 1) * kWgmmaThreads;
// FB_WGMMA_STAGES overrides the stage count at build time (an experiment knob: 6 stages still fit
// the 227 KB a CTA may use, and were no faster in runs 49 and 52).
#ifndef FB_WGMMA_STAGES
#define FB_WGMMA_STAGES 4
#endif
inline constexpr int kWgmmaStages = FB_WGMMA_STAGES;
// A stage whose B tile has tile_n rows (kWgmmaTileN, or the wide tile's 192: fp8_gemm_tile_width.hpp).
constexpr int wgmma_stage_bytes(int tile_n) { return (kWgmmaCtaM + tile_n) * kWgmmaTileK; }
// Plus 1024 bytes of slack: the kernel aligns its stages to 1024 bytes (the swizzle's period).
constexpr int wgmma_pipeline_bytes(int tile_n) {
  return kWgmmaStages * wgmma_stage_bytes(tile_n) + 2 * kWgmmaStages * 8 + 1024;
}
inline constexpr int kWgmmaStageBytes = wgmma_stage_bytes(kWgmmaTileN);
inline constexpr int kWgmmaPipelineBytes = wgmma_pipeline_bytes(kWgmmaTileN);

#if FB_WGMMA_AVAILABLE
// The descriptor's two words. The high one is a constant: stride byte offset (the next 8-row group,
// 1024 bytes) and swizzle mode 1 (128 bytes). The low one holds the address field (bits 0-13, in
// 16-byte units) and the leading byte offset (1, unused with this swizzle); shared memory ends
// below 2^18 bytes, so adding a stage's or a k32 step's offset to the low word never carries out of
// the address field, and the pipeline's loop does it as a 32-bit add (run 70: ptxas otherwise
// rebuilt the 64-bit descriptors from the shared window's base before every block's MMAs).
inline constexpr std::uint32_t kWgmmaDescriptorHigh = (1024 >> 4) | (1u << 30);
__device__ inline std::uint32_t wgmma_descriptor_low(const std::uint8_t* smem) {
  return ((static_cast<std::uint32_t>(__cvta_generic_to_shared(smem)) & 0x3FFFFu) >> 4) | (1u << 16);
}
__device__ inline std::uint64_t wgmma_descriptor_of_low(std::uint32_t low) {
  return (static_cast<std::uint64_t>(kWgmmaDescriptorHigh) << 32) | low;
}
__device__ inline std::uint64_t wgmma_descriptor(const std::uint8_t* smem) {
  return wgmma_descriptor_of_low(wgmma_descriptor_low(smem));  // base offset 0: tiles start on 1024 bytes
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
// The same for a 64 x 192 tile (96 registers): the wide tile of both wgmma GEMMs.
__device__ inline void wgmma_m64n192k32_e4m3(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
// One k32 step of a 64 x kTileN tile (kTileN 128 or 192).
template <int kTileN>
__device__ inline void wgmma_m64k32_e4m3(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  static_assert(kTileN == 128 || kTileN == 192, "wgmma tiles are 128 or 192 columns wide");
  if constexpr (kTileN == 128)
    wgmma_m64n128k32_e4m3(d, desc_a, desc_b, accumulate);
  else
    wgmma_m64n192k32_e4m3(d, desc_a, desc_b, accumulate);
}
#endif

#if FB_WGMMA_AVAILABLE
// Ties the accumulator registers to this point of the program: the compiler sees each register
// read and written here, so it cannot move their uses above a wgmma wait (the asm statements that
// issue and wait are ordered among themselves, but ordinary arithmetic on their outputs is not).
template <int kRegs = kWgmmaAccRegs>
__device__ inline void wgmma_fence_registers(float* d) {
#pragma unroll
  for (int j = 0; j < kRegs; ++j) asm volatile("" : "+f"(d[j])::"memory");
}
#endif

#if FB_WGMMA_AVAILABLE
// mbarriers (shared memory, CTA scope): the pipeline's only synchronisation.
__device__ inline std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ inline void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
__device__ inline void mbar_arrive(std::uint64_t* bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_address(bar))
               : "memory");
}
// One arrival on `bar` that also expects `bytes` more of transactions (the TMA copies that follow
// complete them): the phase ends when the arrivals and the bytes are all in.
__device__ inline void mbar_arrive_expect_bytes(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
// `bytes` more of transactions on `bar`'s current phase without an arrival (the MoE engine's thread
// that issues the token tile's copy arrives later, after its own stores to the stage).
__device__ inline void mbar_expect_bytes(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
// The TMA copies the box at (k0, row0) of `map` into `dst` (1024-byte aligned, the map's 128-byte
// swizzle), completing its bytes on `bar`. Rows past the matrix arrive as zeros.
__device__ inline void tma_load_box(std::uint8_t* dst, const WgmmaTensorMap* map, std::int64_t k0, std::int64_t row0,
                                    std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<int>(k0)), "r"(static_cast<int>(row0)),
      "r"(smem_address(bar))
      : "memory");
}
// Waits until the phase of `bar` with this parity has completed.
__device__ inline void mbar_wait(std::uint64_t* bar, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}
#endif

#if FB_WGMMA_AVAILABLE
// A 4-byte copy from global to shared memory that completes in the background (cp.async);
// cp_async_wait_all waits for this thread's copies, a barrier then shows them to the others.
__device__ inline void cp_async_4(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_address(dst)), "l"(src) : "memory");
}
__device__ inline void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// A barrier among the `threads` threads (a multiple of 32) that name barrier `id` (1..15; 0 is
// __syncthreads'): one consumer warpgroup, without the producer.
__device__ inline void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
#endif

#if FB_WGMMA_AVAILABLE
// Issues one 128-K block's partial of this warpgroup's 64 x kTileN tile into `partial` (overwritten,
// not added): four k32 steps, the first from zero, committed as one group; no wait. The tiles are
// in shared memory, written by the TMA (the async proxy the matrix unit reads through), and named
// by their descriptors (wgmma_descriptor): step s starts 32 s bytes in, 2 s in the descriptor's
// address field (16-byte units; it cannot carry, shared memory ending below 2^18 bytes).
// step_descriptors(s) gives step s's A and B descriptors (a pair).
template <int kTileN, class StepDescriptors>
__device__ inline void wgmma_issue_steps(float* partial, StepDescriptors&& step_descriptors) {
  wgmma_fence_registers<wgmma_acc_regs(kTileN)>(partial);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < kWgmmaTileK / 32; ++s) {
    const auto [desc_a, desc_b] = step_descriptors(s);
    wgmma_m64k32_e4m3<kTileN>(partial, desc_a, desc_b, s > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kTileN = kWgmmaTileN>
__device__ inline void wgmma_issue_block(float* partial, std::uint64_t desc_a, std::uint64_t desc_b) {
  wgmma_issue_steps<kTileN>(partial, [&](int s) { return ulonglong2{desc_a + 2 * s, desc_b + 2 * s}; });
}
// The same from the descriptors' low words (wgmma_descriptor_low): each step's offset a 32-bit add.
template <int kTileN = kWgmmaTileN>
__device__ inline void wgmma_issue_block_low(float* partial, std::uint32_t low_a, std::uint32_t low_b) {
  wgmma_issue_steps<kTileN>(partial, [&](int s) {
    return ulonglong2{wgmma_descriptor_of_low(low_a + 2 * s), wgmma_descriptor_of_low(low_b + 2 * s)};
  });
}
// Waits for this warpgroup's committed blocks; `partial` is read only after this point.
template <int kTileN = kWgmmaTileN>
__device__ inline void wgmma_wait_block(float* partial) {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  wgmma_fence_registers<wgmma_acc_regs(kTileN)>(partial);
}
// Hands registers between the warpgroups of a CTA (setmaxnreg; every thread of the warpgroup runs
// it, and ptxas allocates each side's code within its count): the wide tile's consumers hold two
// 96-register arrays, more than the 168 each of 384 threads gets, and the producer needs few.
// 56 + 2 x 224 (x 128 threads) is the launch's 3 x 168; with 40 the producer's loop spilled.
inline constexpr int kWgmmaProducerRegs = 56;
inline constexpr int kWgmmaWideConsumerRegs = 224;
static_assert(kWgmmaProducerRegs + kWgmmaConsumerGroups * kWgmmaWideConsumerRegs <= 168 * (kWgmmaConsumerGroups + 1));
template <int kRegs>
__device__ inline void wgmma_registers_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ inline void wgmma_registers_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
#endif

// Whether this thread is in the CTA's producer warpgroup (the last one).
__device__ inline bool wgmma_is_producer() { return threadIdx.x >= kWgmmaConsumerGroups * kWgmmaThreads; }
// This consumer thread's warpgroup: its rows of the CTA tile start at 64 x this.
__device__ inline int wgmma_consumer_group() { return static_cast<int>(threadIdx.x / kWgmmaThreads); }

// One unit of a CTA's work: a kWgmmaCtaM x kTileN tile of C at (m0, n0) over the 128-K blocks
// [kb_begin, kb_end) (a split-K slice, or all of K).
struct WgmmaUnit {
  std::int64_t m0, n0, kb_begin, kb_end;
};

// The K loops of a CTA's units, warp-specialised (all kWgmmaCtaThreads threads call it). unit(i, w)
// fills unit i of this CTA and returns false past the last one; the stages and their barriers run
// on from one unit into the next, so a persistent CTA's loads of unit i + 1 overlap unit i's
// epilogue.
// - one producer thread has the TMA copy block kb's A (kWgmmaCtaM rows from m0) and B (128 rows
//   from n0) boxes into the next stage once the consumers have released it (its `empty` barrier);
//   the copies complete their bytes on the stage's `full` barrier. The rest of the producer
//   warpgroup returns at once;
// - consumer warpgroup g, for each unit: start(w); then for each block, in increasing kb: wait for
//   `full`, let the matrix unit form its rows' partial of the block and wait for it, release the
//   stage and call promote(kb, partial) on the CUDA cores; then finish(w) (the unit's epilogue;
//   consumer threads only, so no __syncthreads inside: the producer thread does not reach it).
//   While one warpgroup promotes, the other's MMAs run; the loads run kWgmmaStages blocks ahead.
//   A warpgroup whose 64 rows all lie past `rows` still waits and releases, and skips its MMAs and
//   promotions.
// So the arithmetic (and the emulation) is that of a one-stage loop; only when the bytes arrive
// changes. Returns in every thread. Run 53 tried issuing block kb + 1's MMAs before waiting for
// block kb (two partial buffers, wait_group 1, setmaxnreg): ptxas serialised the MMAs around the
// promotion's reads (C7514) and the probe timed it 1.2x slower (tools/probes/wgmma_pipeline_probe.cu).
// `maps` is the launch's __grid_constant__ parameter (wgmma_operands). Shared memory:
// wgmma_pipeline_bytes(kTileN) of `smem` (dynamic; the stages start at its first 1024-byte boundary, as the
// 128-byte swizzle needs).
// kTileN: the B tile's rows (the columns of C a unit covers), 128 or 192; with 192 the consumers'
// two 96-register arrays need the producer warpgroup's registers (setmaxnreg), and the B map's box
// must be 192 rows.
template <int kTileN = kWgmmaTileN, class Unit, class Start, class Promote, class Finish>
__device__ inline void wgmma_pipeline(std::uint8_t* smem, const WgmmaOperands& maps, std::int64_t rows, Unit&& unit,
                                      Start&& start, Promote&& promote, Finish&& finish) {
#if FB_WGMMA_AVAILABLE
  constexpr int kStageBytes = wgmma_stage_bytes(kTileN), kAccRegs = wgmma_acc_regs(kTileN);
  constexpr bool kWide = kTileN > kWgmmaTileN;
  smem += (1024 - smem_address(smem) % 1024) % 1024;
  auto* full = reinterpret_cast<std::uint64_t*>(smem + kWgmmaStages * kStageBytes);
  std::uint64_t* empty = full + kWgmmaStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kWgmmaStages; ++s) {
      mbar_init(&full[s], 1);  // the producer's arrival; the TMA's bytes complete the phase
      mbar_init(&empty[s], kWgmmaConsumerGroups * kWgmmaThreads);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  constexpr int kA = kWgmmaCtaM * kWgmmaTileK;
  WgmmaUnit w{};
  std::int64_t it = 0;  // blocks through the stages so far: stage it % kWgmmaStages, its use it / kWgmmaStages
  if (wgmma_is_producer()) {
    if constexpr (kWide) wgmma_registers_down<kWgmmaProducerRegs>();
    if (threadIdx.x != kWgmmaConsumerGroups * kWgmmaThreads) return;
    for (int u = 0; unit(u, w); ++u) {
      for (std::int64_t kb = w.kb_begin; kb < w.kb_end; ++kb, ++it) {
        const int s = static_cast<int>(it % kWgmmaStages);
        const std::int64_t use = it / kWgmmaStages;
        if (use > 0) mbar_wait(&empty[s], static_cast<std::uint32_t>((use - 1) & 1));
        std::uint8_t* stage = smem + s * kStageBytes;
        mbar_arrive_expect_bytes(&full[s], kStageBytes);
        tma_load_box(stage, &maps.a, kb * kWgmmaTileK, w.m0, &full[s]);
        tma_load_box(stage + kA, &maps.b, kb * kWgmmaTileK, w.n0, &full[s]);
      }
    }
    return;
  }
  if constexpr (kWide) wgmma_registers_up<kWgmmaWideConsumerRegs>();
  const int g = wgmma_consumer_group();
  // The current stage's descriptor low word, carried from block to block (a stage's bytes on, back
  // to stage 0 after the last): run 70's profile found ptxas rebuilding the 64-bit descriptors
  // from the shared window's base before every block's MMAs (about 60 dependent instructions
  // between the `full` wait and the first MMA), where a loop-carried value cannot be rebuilt.
  // This warpgroup's A rows start g * 64 rows into the stage, B after A.
  constexpr std::uint32_t kStageDesc = kStageBytes >> 4, kBDesc = kA >> 4;
  const std::uint32_t a_desc = static_cast<std::uint32_t>(g) * ((kWgmmaTileM * kWgmmaTileK) >> 4);
  std::uint32_t stage_desc = wgmma_descriptor_low(smem);
  for (int u = 0; unit(u, w); ++u) {
    // Defined afresh per unit: the issue's register fence reads `partial`, so without this its 64
    // registers stay live through finish(w) beside the epilogue's (the persistent block-scale
    // kernel spilled 300 bytes that way; the general kernel went from 162 to 154 registers).
    float partial[kAccRegs];
#pragma unroll
    for (int j = 0; j < kAccRegs; ++j) partial[j] = 0.0f;
    const bool active = w.m0 + static_cast<std::int64_t>(g) * kWgmmaTileM < rows;
    start(w);
    for (std::int64_t kb = w.kb_begin; kb < w.kb_end; ++kb, ++it) {
      const int s = static_cast<int>(it % kWgmmaStages);
      mbar_wait(&full[s], static_cast<std::uint32_t>((it / kWgmmaStages) & 1));
      // The TMA and the matrix unit both work in the async proxy: the completed phase of `full`
      // is all the ordering the reads need.
      if (active) {
        wgmma_issue_block_low<kTileN>(partial, stage_desc + a_desc, stage_desc + kBDesc);
        wgmma_wait_block<kTileN>(partial);
      }
      stage_desc = s == kWgmmaStages - 1 ? stage_desc - (kWgmmaStages - 1) * kStageDesc : stage_desc + kStageDesc;
      mbar_arrive(&empty[s]);
      if (active) promote(kb, static_cast<const float*>(partial));
    }
    finish(w);
  }
#else
  (void)smem, (void)maps, (void)rows, (void)unit, (void)start, (void)promote, (void)finish;
#endif
}

// Lets `kernel` use kBytes of dynamic shared memory (the pipeline's by default: more than the 48 KB
// a launch gets by default); once per kernel, before its first launch.
template <auto kKernel, int kBytes = kWgmmaPipelineBytes>
inline void wgmma_pipeline_allow_smem() {
  static const bool once = [] {
    gpu_check(hipFuncSetAttribute(reinterpret_cast<const void*>(kKernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                                  kBytes),
              "hipFuncSetAttribute(wgmma pipeline shared memory)");
    return true;
  }();
  (void)once;
}

}  // namespace fb
