// The MoE GEMMs' exact engine on AMD: integer MFMA block sums, promoted per lane in K order
// (moe_gemm_mfma_wave.hpp: the wave's work, shared with the CPU simulation that the tests compare
// with the emulation bitwise). A CTA is one sort block and up to 4 waves of 64 lanes; a wave owns
// 16 stage-1 outputs (their gate and up tiles) or 32 stage-2 outputs (two W2 tiles) and walks the
// block 16 sorted rows at a time up to the padding. No shared-memory staging, no split-K, no
// atomics: deterministic, and exact's bits on every device (the block sums are exact integers).
// Status: compile-checked with Debian's hipcc for gfx90a and gfx940 (.ci/run); never run, as no AMD
// device has been available to the project: its GPU claims hold by the CPU simulation of its code
// until an AMD run checks them. Under nvcc this file builds only the "unavailable" answer.
#include "kernels/common/hip_compat.hpp"  // first: the device intrinsics the codecs use
#include "kernels/moe_gemm/moe_gemm_mfma.hpp"

#include <cstdlib>

#include "core/errors.hpp"
#include "core/knob_choice.hpp"

#if defined(__HIPCC__)
#include <mutex>

#include "kernels/common/flag_probe.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma_wave.hpp"
#endif

#if defined(__HIPCC__) && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__))
#define FB_MOE_MFMA_FORM 32  // v_mfma_i32_16x16x32_i8
#elif defined(__HIPCC__) && (defined(__gfx908__) || defined(__gfx90a__))
#define FB_MOE_MFMA_FORM 16  // v_mfma_i32_16x16x16i8, twice
#else
#define FB_MOE_MFMA_FORM 0
#endif

namespace fb {

#if defined(__HIPCC__)
namespace {

constexpr int kMaxWaves = 4;
constexpr int kMaxBlock = 128;  // B

// The instruction on the device: this lane's operands (kLanes = 1); the hardware gathers the wave's.
struct MoeMfmaDevice {
  __device__ static void block_sums(const std::uint64_t (&a)[1], const std::uint64_t (&b)[1], std::int32_t (&d)[1][4]) {
    typedef int int4_v __attribute__((ext_vector_type(4)));
    int4_v c = {0, 0, 0, 0};
#if FB_MOE_MFMA_FORM == 32
    c = __builtin_amdgcn_mfma_i32_16x16x32_i8(static_cast<long>(a[0]), static_cast<long>(b[0]), c, 0, 0, 0);
#elif FB_MOE_MFMA_FORM == 16
    c = __builtin_amdgcn_mfma_i32_16x16x16i8(static_cast<int>(a[0] & 0xFFFFFFFFu), static_cast<int>(b[0] & 0xFFFFFFFFu),
                                             c, 0, 0, 0);
    c = __builtin_amdgcn_mfma_i32_16x16x16i8(static_cast<int>(a[0] >> 32), static_cast<int>(b[0] >> 32), c, 0, 0, 0);
#else
    (void)a, (void)b;  // not reached: moe_mfma_unavailable() keeps the launchers off devices without it
#endif
#pragma unroll
    for (int r = 0; r < 4; ++r) d[0][r] = c[r];
  }
};

// The CTA's sort block: entries (and stage 2's weights) staged as the warp kernels stage them.
__device__ inline bool stage_block(const std::int32_t* ids, const float* w, const std::int32_t* num_valid,
                                   std::int64_t max_entries, std::int64_t block, std::int32_t* entries, float* weights,
                                   std::int64_t& first) {
  const std::int64_t valid = moe_valid_entries(num_valid[0], max_entries);
  first = static_cast<std::int64_t>(blockIdx.y) * block;
  if (first >= valid) return false;  // the whole CTA: blocks past the sorted entries
  for (int r = threadIdx.x; r < block; r += blockDim.x) {  // rows past the count read as padding
    const bool live = first + r < valid;
    entries[r] = live ? ids[first + r] : kPadEntry;
    if (weights) weights[r] = live ? w[first + r] : 0.0f;
  }
  __syncthreads();
  return true;
}

template <bool kOai>
__global__ __launch_bounds__(kMaxWaves * kMfmaWaveLanes) void moe_stage1_mfma_kernel(Stage1Args a) {
  __shared__ std::int32_t entries[kMaxBlock];
  std::int64_t first = 0;
  if (!stage_block(a.sorted_token_ids, nullptr, a.num_valid_ids, a.max_entries, a.block, entries, nullptr, first)) return;
  const int waves = static_cast<int>(blockDim.x) / kMfmaWaveLanes, wave = static_cast<int>(threadIdx.x) / kMfmaWaveLanes;
  moe_stage1_mfma_wave<1, kOai, MoeMfmaDevice>(a, entries, first, a.sorted_expert_ids[blockIdx.y],
                                               (static_cast<std::int64_t>(blockIdx.x) * waves + wave) * kMfmaStage1Cols,
                                               static_cast<int>(threadIdx.x) % kMfmaWaveLanes);
}

__global__ __launch_bounds__(kMaxWaves * kMfmaWaveLanes) void moe_stage2_mfma_kernel(Stage2Args a) {
  __shared__ std::int32_t entries[kMaxBlock];
  __shared__ float weights[kMaxBlock];
  std::int64_t first = 0;
  if (!stage_block(a.sorted_token_ids, a.sorted_weights, a.num_valid_ids, a.max_entries, a.block, entries, weights, first))
    return;
  const int waves = static_cast<int>(blockDim.x) / kMfmaWaveLanes, wave = static_cast<int>(threadIdx.x) / kMfmaWaveLanes;
  moe_stage2_mfma_wave<1, MoeMfmaDevice>(a, entries, weights, first, a.sorted_expert_ids[blockIdx.y],
                                         (static_cast<std::int64_t>(blockIdx.x) * waves + wave) * kMfmaStage2Cols,
                                         static_cast<int>(threadIdx.x) % kMfmaWaveLanes);
}

__global__ void moe_mfma_probe_kernel(int* out) { *out = FB_MOE_MFMA_FORM != 0 ? 1 : 0; }

}  // namespace
#endif  // __HIPCC__

std::string moe_mfma_unavailable() {
#if defined(__HIPCC__)
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] {
    why = run_flag_probe(moe_mfma_probe_kernel, "integer MFMA",
                         "this build has no integer-MFMA code (gfx908, gfx90a, gfx940-gfx942, gfx950) for this device");
  });
  return why;
#else
  return "the MoE MFMA engine is AMD's (the mma.sync and wgmma engines run exact on NVIDIA)";
#endif
}

bool moe_mfma_wanted() {
  const char* variable = "FUSEBENCH_MOE_MFMA";
  return knob_choice(variable, std::getenv(variable), "0", "1") == "1";
}

bool moe_mfma_takes(const MoeGemmParams& p, bool stage1) {
#if defined(__HIPCC__)
  if (p.engine == MoeGemmEngine::plain || !moe_mfma_wanted()) return false;
  const bool fits = stage1 ? moe_exact_fits(p.tokens, p.hidden / 2) : moe_exact_fits(p.pairs(), p.inter / 2);
  return fits && p.block <= kMaxBlock && p.max_blocks() <= 65535 && moe_mfma_unavailable().empty();
#else
  (void)p, (void)stage1;
  return false;
#endif
}

void moe_stage1_mfma_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream) {
  const std::string why = moe_mfma_unavailable();
  if (!why.empty()) throw DeviceError("moe_stage1_mfma: " + why);
#if defined(__HIPCC__)
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter,
                     p.max_entries()};
  const int waves = moe_exact_warps(p.inter, kMfmaStage1Cols);
  const dim3 grid(static_cast<unsigned>(p.inter / (kMfmaStage1Cols * waves)), static_cast<unsigned>(p.max_blocks()));
  const auto threads = static_cast<unsigned>(kMfmaWaveLanes * waves);
  const auto s = static_cast<hipStream_t>(stream);
  if (p.oai)
    moe_stage1_mfma_kernel<true><<<grid, threads, 0, s>>>(a);
  else
    moe_stage1_mfma_kernel<false><<<grid, threads, 0, s>>>(a);
  gpu_check_launch("moe_stage1_mfma_kernel");
#else
  (void)p, (void)b, (void)stream;
#endif
}

void moe_stage2_mfma_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream) {
  const std::string why = moe_mfma_unavailable();
  if (!why.empty()) throw DeviceError("moe_stage2_mfma: " + why);
#if defined(__HIPCC__)
  const Stage2Args a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q,
                     b.a2_scales,        b.w2,             b.w2_scales,         b.y,             p.tokens,
                     p.topk,             p.block,          p.hidden,            p.inter,
                     p.max_entries()};
  const int waves = moe_exact_warps(p.hidden, kMfmaStage2Cols);
  const dim3 grid(static_cast<unsigned>(p.hidden / (kMfmaStage2Cols * waves)), static_cast<unsigned>(p.max_blocks()));
  moe_stage2_mfma_kernel<<<grid, static_cast<unsigned>(kMfmaWaveLanes * waves), 0, static_cast<hipStream_t>(stream)>>>(a);
  gpu_check_launch("moe_stage2_mfma_kernel");
#else
  (void)p, (void)b, (void)stream;
#endif
}

}  // namespace fb
