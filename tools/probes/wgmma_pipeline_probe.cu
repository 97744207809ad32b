// Where the fp8 GEMMs' wgmma CTA spends its time per 128-K block. Runs 50-52 timed about 600 ns a
// block (128 x 128 x 128) whether 24, 96 or all 132 SMs ran CTAs (M = 192, 1024, 32768), against
// about 300 ns for the MMAs at the H200's fp8 rate, so the limit is inside one CTA, not a shared
// resource. This probe runs the pipeline's pieces apart, on the real header
// (kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp), over the 32768 x 1536 x 6144 GEMM's operands:
//   full      TMA producer + two consumer warpgroups (MMA, wait, release, acc += partial): the GEMMs'
//             K loop, persistent over tiles (no CTA turnover, no epilogue)
//   loads     the TMA stream alone: consumers wait for each stage and release it, no MMA
//   mma       MMAs and promotions on resident stages, no TMA (no waiting on memory)
//   mma_bare  MMAs alone (wait, no promotion)
//   overlap   full, with block i + 1's MMAs in flight while block i is promoted (two partial
//             buffers, wait_group 1; setmaxnreg: producer 40, consumers 232 registers)
//   mma_overlap  overlap without TMA
// Operands: random e4m3 bytes (run 53a used constant bytes and zero stages, with which the matrix
// unit ran above the device's fp8 peak; its MMA rates are void, its TMA-alone rate stands). The
// resident stages of the MMA-only modes are fenced for the async proxy since run 53b (whose
// MMA-only modes, unfenced, still ran above the peak); run 54a ran it fenced and its MMA-only modes
// still read above the device's fp8 peak (2650 TFLOP/s): not explained, not used for decisions.
// Each CTA walks tiles c, c + G, ... of the GEMM's 256 x 12 tiles (N fastest, as the kernels'
// grid), 48 blocks each, as one stream of blocks: 8 tiles per CTA at 24 CTAs (M = 192's count) and
// at one per SM. Output: ns per block per CTA and the TFLOP/s
// the grid would give, medians of 7 launches timed with events.
//
//   nvcc -O3 -std=c++17 --generate-code=arch=compute_90a,code=sm_90a -I. -Xptxas -v \
//     tools/probes/wgmma_pipeline_probe.cu -o /tmp/wgmma_probe && /tmp/wgmma_probe > wgmma_probe.md
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "wgmma_probe: %s: %s\n", #x, cudaGetErrorString(e_));   \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

namespace {

constexpr int kRows = 32768, kCols = 1536, kDepth = 6144;
constexpr int kBlocks = kDepth / fb::kWgmmaTileK;                  // 48 per tile
constexpr int kNTiles = kCols / fb::kWgmmaTileN, kTiles = (kRows / fb::kWgmmaCtaM) * kNTiles;
enum Mode { full, loads, mma, mma_bare, overlap, mma_overlap, kModes };
const char* const kNames[kModes] = {"full", "loads", "mma", "mma_bare", "overlap", "mma_overlap"};

#if FB_WGMMA_AVAILABLE
// Issues one block's four k32 MMAs into d (from zero) and commits them; no wait.
__device__ inline void issue_block(float* d, const std::uint8_t* a, const std::uint8_t* b) {
  fb::wgmma_fence_registers(d);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < fb::kWgmmaTileK / 32; ++s)
    fb::wgmma_m64n128k32_e4m3(d, fb::wgmma_descriptor(a + 32 * s), fb::wgmma_descriptor(b + 32 * s), s > 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kN>
__device__ inline void wait_groups(float* d) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kN) : "memory");
  fb::wgmma_fence_registers(d);
}
#endif

template <int kMode>
__global__ __launch_bounds__(fb::kWgmmaCtaThreads, 1) void probe_kernel(const FB_GRID_CONSTANT fb::WgmmaOperands maps,
                                                                        float* sink, int tiles_per_cta,
                                                                        const uint4* fill) {
#if FB_WGMMA_AVAILABLE
  using namespace fb;
  constexpr bool kOverlap = kMode == overlap || kMode == mma_overlap;
  constexpr bool kTma = kMode == full || kMode == loads || kMode == overlap;
  extern __shared__ __align__(128) std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + (1024 - smem_address(smem_raw) % 1024) % 1024;
  auto* full_bar = reinterpret_cast<std::uint64_t*>(smem + kWgmmaStages * kWgmmaStageBytes);
  std::uint64_t* empty_bar = full_bar + kWgmmaStages;
  if (!kTma)  // resident stages: random operand bytes (constant bytes make the matrix unit faster)
    for (int i = threadIdx.x; i < kWgmmaStages * kWgmmaStageBytes / 16; i += blockDim.x)
      reinterpret_cast<uint4*>(smem)[i] = fill[i];
  // The matrix unit reads shared memory through the async proxy: ordinary stores reach it only
  // after this fence (and the barrier below). Run 53b's build lacked it; with it (run 54a) the
  // MMA-only modes still run above the device's peak, so that was not the cause.
  if (!kTma) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  if (threadIdx.x == 0) {
    for (int s = 0; s < kWgmmaStages; ++s) mbar_init(&full_bar[s], 1), mbar_init(&empty_bar[s], 2 * kWgmmaThreads);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  const int n = tiles_per_cta * kBlocks;
  constexpr int kA = kWgmmaCtaM * kWgmmaTileK;
  if (wgmma_is_producer()) {
    if constexpr (kOverlap) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if constexpr (!kTma) return;
    if (threadIdx.x != kWgmmaConsumerGroups * kWgmmaThreads) return;
    for (int i = 0; i < n; ++i) {
      const int s = i % kWgmmaStages, use = i / kWgmmaStages;
      const int tile = (static_cast<int>(blockIdx.x) + (i / kBlocks) * static_cast<int>(gridDim.x)) % kTiles;
      if (use > 0) mbar_wait(&empty_bar[s], static_cast<std::uint32_t>((use - 1) & 1));
      std::uint8_t* stage = smem + s * kWgmmaStageBytes;
      const int k0 = (i % kBlocks) * kWgmmaTileK;
      mbar_arrive_expect_bytes(&full_bar[s], kWgmmaStageBytes);
      tma_load_box(stage, &maps.a, k0, (tile / kNTiles) * kWgmmaCtaM, &full_bar[s]);
      tma_load_box(stage + kA, &maps.b, k0, (tile % kNTiles) * kWgmmaTileN, &full_bar[s]);
    }
    return;
  }
  if constexpr (kOverlap) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int g = wgmma_consumer_group();
  float acc[kWgmmaAccRegs], p0[kWgmmaAccRegs], p1[kWgmmaAccRegs];
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = 0.0f;
  auto stage_a = [&](int i) { return smem + (i % kWgmmaStages) * kWgmmaStageBytes + g * kWgmmaTileM * kWgmmaTileK; };
  auto stage_b = [&](int i) { return smem + (i % kWgmmaStages) * kWgmmaStageBytes + kA; };
  auto wait_full = [&](int i) {
    if (kTma) mbar_wait(&full_bar[i % kWgmmaStages], static_cast<std::uint32_t>((i / kWgmmaStages) & 1));
  };
  auto release = [&](int i) {
    if (kTma) mbar_arrive(&empty_bar[i % kWgmmaStages]);
  };
  auto promote = [&](const float* p) {
#pragma unroll
    for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = acc[j] + p[j];
  };
  if constexpr (!kOverlap) {
    for (int i = 0; i < n; ++i) {
      wait_full(i);
      if (kMode != loads) {
        issue_block(p0, stage_a(i), stage_b(i));
        wait_groups<0>(p0);
      }
      release(i);
      if (kMode == full || kMode == mma) promote(p0);
    }
    if (kMode == mma_bare) promote(p0);
  } else {
    // Block i's partial in p0 (i even) or p1 (odd); block i + 1 is issued before block i is
    // waited for, so the matrix unit always has the next block while the CUDA cores promote.
    wait_full(0);
    issue_block(p0, stage_a(0), stage_b(0));
    for (int i = 0; i < n; i += 2) {
      if (i + 1 < n) {
        wait_full(i + 1);
        issue_block(p1, stage_a(i + 1), stage_b(i + 1));
        wait_groups<1>(p0);
      } else {
        wait_groups<0>(p0);
      }
      release(i);
      promote(p0);
      if (i + 1 >= n) break;
      if (i + 2 < n) {
        wait_full(i + 2);
        issue_block(p0, stage_a(i + 2), stage_b(i + 2));
        wait_groups<1>(p1);
      } else {
        wait_groups<0>(p1);
      }
      release(i + 1);
      promote(p1);
    }
  }
  float fold = 0.0f;
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) fold = fold + acc[j];
  if (fold == 12345.0f) sink[threadIdx.x] = fold;  // keeps the work; never true for these inputs
#else
  (void)maps;
  (void)sink;
  (void)tiles_per_cta;
  (void)fill;
#endif
}

CUtensorMap encode(const void* base, int rows, int box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {kDepth, static_cast<cuuint64_t>(rows)};
  const cuuint64_t stride[1] = {kDepth};
  const cuuint32_t box[2] = {128, static_cast<cuuint32_t>(box_rows)}, es[2] = {1, 1};
  if (fn(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, stride, box, es,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    std::fprintf(stderr, "wgmma_probe: cuTensorMapEncodeTiled refused a map\n");
    std::exit(2);
  }
  return map;
}

template <int kMode>
float time_mode(const fb::WgmmaOperands& maps, float* sink, int grid, int tiles_per_cta, const uint4* fill) {
  auto* kernel = probe_kernel<kMode>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, fb::kWgmmaPipelineBytes));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::vector<float> ms;
  for (int r = 0; r < 8; ++r) {
    CHECK(cudaEventRecord(t0));
    kernel<<<grid, fb::kWgmmaCtaThreads, fb::kWgmmaPipelineBytes>>>(maps, sink, tiles_per_cta, fill);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaGetLastError());
    float m = 0;
    CHECK(cudaEventElapsedTime(&m, t0, t1));
    if (r > 0) ms.push_back(m);  // the first launch warms up
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main() {
  std::uint8_t *a = nullptr, *b = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&a, static_cast<size_t>(kRows) * kDepth));
  CHECK(cudaMalloc(&b, static_cast<size_t>(kCols) * kDepth));
  CHECK(cudaMalloc(&sink, 4096));
  // Random e4m3 bytes, NaN (0x7F, 0xFF) excluded: run 53a's constant bytes (1.0, 0.5, zero stages)
  // let the matrix unit run above the device's fp8 peak, so its MMA rates were not real ones.
  {
    std::vector<std::uint8_t> host(static_cast<size_t>(kRows) * kDepth);
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (auto& v : host) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = static_cast<std::uint8_t>(x >> 24);
      if ((v & 0x7F) == 0x7F) v ^= 0x01;
    }
    CHECK(cudaMemcpy(a, host.data(), host.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, host.data(), static_cast<size_t>(kCols) * kDepth, cudaMemcpyHostToDevice));
  }
  const fb::WgmmaOperands maps{encode(a, kRows, fb::kWgmmaCtaM), encode(b, kCols, fb::kWgmmaTileN)};
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("| mode | CTAs | us (median of 7) | ns per block per CTA | TFLOP/s (the grid's tiles) |\n|---|---:|---:|---:|---:|\n");
  constexpr int kTilesPerCta = 8;
  using Timer = float (*)(const fb::WgmmaOperands&, float*, int, int, const uint4*);
  const Timer timers[kModes] = {time_mode<full>, time_mode<loads>, time_mode<mma>, time_mode<mma_bare>,
                                time_mode<overlap>, time_mode<mma_overlap>};
  for (int grid : {24, sms}) {
    for (int m = 0; m < kModes; ++m) {
      const float ms = timers[m](maps, sink, grid, kTilesPerCta, reinterpret_cast<const uint4*>(a));
      const double blocks = static_cast<double>(kTilesPerCta) * kBlocks;
      const double flop = 2.0 * fb::kWgmmaCtaM * fb::kWgmmaTileN * fb::kWgmmaTileK * blocks * grid;
      std::printf("| %s | %d | %.1f | %.0f | %.0f |\n", kNames[m], grid, ms * 1e3, ms * 1e6 / blocks,
                  m == loads ? 0.0 : flop / (ms * 1e-3) / 1e12);
    }
  }
  return 0;
}
