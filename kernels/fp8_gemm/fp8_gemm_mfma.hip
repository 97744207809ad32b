// The `mma` variant's kernel on AMD: v_mfma_f32_16x16x32_fp8_fp8 (CDNA3: gfx940-gfx942), fp8 in
// AMD's e4m3fnuz. The structure of the NVIDIA mma.sync kernel (fp8_gemm_mma.hip) with AMD's
// instruction: each 128-K block's partial comes from the matrix unit (4 instructions from a zero
// accumulator: fp8_gemm_mfma_layout.hpp), and the partials are added into one fp32 accumulator in
// ascending K on the vector units, so the emulation is fp8_gemm_blocked_emu and the claims are the
// matrix-unit ones (bound against the emulation and the plain kernel, fp64 budget, the same bytes
// on a second run).
// Mapping: a block of 4 waves (256 threads) owns 16 output columns (A's 16 rows) and 16 rows of A
// (B's 16 columns: blockIdx.y); wave w takes K blocks w, w + 4, ... in rounds of 16 blocks (4 a
// wave, every load of the round issued first) and writes each block's 16 x 16 partial to shared
// memory; thread t then adds the round's partials of (column t % 16, row t / 16) in block order.
// Status: compile-checked with Debian's hipcc for gfx940 (.ci/run); never run (no AMD device has
// been available to the project): its GPU claims are unverified until an AMD run makes them.
#include "core/errors.hpp"
#include "kernels/common/flag_probe.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_mfma_layout.hpp"

#include <mutex>
#include <string>

#if defined(__HIPCC__) && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
#define FB_F8_MFMA_AVAILABLE 1
#else
#define FB_F8_MFMA_AVAILABLE 0
#endif

namespace fb {

#if defined(__HIPCC__)
namespace {

constexpr int kWaves = 4;
constexpr int kThreads = kMfmaLanes * kWaves;
constexpr int kBlocksPerWave = 4;
constexpr int kRoundBlocks = kWaves * kBlocksPerWave;
static_assert(kThreads == kMfmaTile * kMfmaTile, "one finishing thread per output of the tile");

// Bytes 32 g .. 32 g + 31 of block row `row` from byte k (zeros past `rows`).
__device__ inline void load_block_bytes(const std::uint8_t* m, std::int64_t rows, std::int64_t depth,
                                        std::int64_t row, std::int64_t k, int group, uint4 (&out)[2]) {
  out[0] = out[1] = make_uint4(0, 0, 0, 0);
  if (row < rows) {
    const uint4* p = reinterpret_cast<const uint4*>(m + row * depth + k + 32 * group);
    out[0] = p[0];
    out[1] = p[1];
  }
}

// Instruction j's 8 operand bytes (bytes 8 j .. 8 j + 7 of the lane's 32) as one 64-bit operand.
__device__ inline long operand_of(const uint4 (&v)[2], int j) {
  const uint4& h = v[j / 2];
  const unsigned lo = (j % 2) ? h.z : h.x, hi = (j % 2) ? h.w : h.y;
  return static_cast<long>((static_cast<unsigned long long>(hi) << 32) | lo);
}

__global__ __launch_bounds__(kThreads) void fp8_gemm_mfma_kernel(Fp8GemmParams p, Fp8GemmBuffers b) {
  __shared__ float partial[kRoundBlocks * kMfmaTile * kMfmaTile];  // [slot][row of A (token)][column]
  const int wave = static_cast<int>(threadIdx.x) / kMfmaLanes, lane = static_cast<int>(threadIdx.x) % kMfmaLanes;
  const int group = mfma_operand_group(lane);
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kMfmaTile;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kMfmaTile;
  const std::int64_t blocks = p.depth / kFp8GemmBlockK;
  const int fc = static_cast<int>(threadIdx.x) % kMfmaTile, fr = static_cast<int>(threadIdx.x) / kMfmaTile;
  float acc = 0.0f;
  for (std::int64_t round0 = 0; round0 < blocks; round0 += kRoundBlocks) {
    uint4 w[kBlocksPerWave][2], x[kBlocksPerWave][2];
#pragma unroll
    for (int i = 0; i < kBlocksPerWave; ++i) {
      const std::int64_t blk = round0 + wave + static_cast<std::int64_t>(i) * kWaves;
      const bool here = blk < blocks;
      const std::int64_t k = (here ? blk : 0) * kFp8GemmBlockK;
      load_block_bytes(b.b, here ? p.cols : 0, p.depth, n0 + mfma_operand_row(lane), k, group, w[i]);
      load_block_bytes(b.a, here ? p.rows : 0, p.depth, m0 + mfma_operand_row(lane), k, group, x[i]);
    }
#pragma unroll
    for (int i = 0; i < kBlocksPerWave; ++i) {
      const std::int64_t blk = round0 + wave + static_cast<std::int64_t>(i) * kWaves;
      if (blk >= blocks) continue;  // wave-uniform
      typedef float float4_v __attribute__((ext_vector_type(4)));
      float4_v d = {0.0f, 0.0f, 0.0f, 0.0f};
#if FB_F8_MFMA_AVAILABLE
#pragma unroll
      for (int j = 0; j < kMfmaPerBlock; ++j)
        d = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(operand_of(w[i], j), operand_of(x[i], j), d, 0, 0, 0);
#endif
      float* out = partial + (wave + i * kWaves) * kMfmaTile * kMfmaTile;
#pragma unroll
      for (int r = 0; r < 4; ++r) out[mfma_result_col(lane) * kMfmaTile + mfma_result_row(lane, r)] = d[r];
    }
    __syncthreads();
    // D[i][j] is (column n0 + i, row m0 + j) and sits at partial[slot][j][i]: thread (fc, fr) adds
    // the round's partials of column n0 + fc, row m0 + fr in block order.
    const std::int64_t in_round = blocks - round0 < kRoundBlocks ? blocks - round0 : kRoundBlocks;
    for (int s = 0; s < in_round; ++s) acc = acc + partial[(s * kMfmaTile + fr) * kMfmaTile + fc];
    __syncthreads();  // the next round overwrites the partials
  }
  const std::int64_t n = n0 + fc, m = m0 + fr;
  if (n < p.cols && m < p.rows) b.c[m * p.cols + n] = fp8_gemm_epilogue(acc, b.b_scale[n], b.a_scale[m]);
}

__global__ void mfma_probe_kernel(int* out) { *out = FB_F8_MFMA_AVAILABLE; }

}  // namespace
#endif  // __HIPCC__

std::string fp8_gemm_mfma_unavailable(const Fp8GemmParams& p) {
#if defined(__HIPCC__)
  if (p.flavour != Fp8Flavour::e4m3fnuz) return "CDNA3's fp8 MFMA takes e4m3fnuz only (fp8=e4m3fn)";
  if (p.depth % kFp8GemmBlockK != 0) return "the fp8 MFMA kernel needs K % 128 == 0 (K=" + std::to_string(p.depth) + ")";
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] {
    why = run_flag_probe(mfma_probe_kernel, "fp8 MFMA", "this build has no gfx940-gfx942 code for this device (fp8 MFMA)");
  });
  return why;
#else
  (void)p;
  return "the fp8 MFMA kernel is AMD's (mma.sync runs this variant on NVIDIA)";
#endif
}

void fp8_gemm_mfma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  const std::string why = fp8_gemm_mfma_unavailable(p);
  if (!why.empty()) throw DeviceError("fp8_gemm_mfma: " + why);
#if defined(__HIPCC__)
  if (p.rows == 0 || p.cols == 0) return;
  const std::int64_t chunks = (p.rows + kMfmaTile - 1) / kMfmaTile;
  if (chunks > 65535) throw InputError("the fp8 MFMA kernel takes at most 65535 row chunks (M=" + std::to_string(p.rows) + ")");
  const dim3 grid(static_cast<unsigned>((p.cols + kMfmaTile - 1) / kMfmaTile), static_cast<unsigned>(chunks));
  fp8_gemm_mfma_kernel<<<grid, kThreads, 0, static_cast<hipStream_t>(stream)>>>(p, b);
  gpu_check_launch("fp8_gemm_mfma_kernel");
#else
  (void)b, (void)stream;
#endif
}

}  // namespace fb
