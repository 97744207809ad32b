// The fp8 GEMM for small and medium M on the matrix units, mma.sync e4m3 (NVIDIA sm_89 and later):
// variant `mma` of fp8_gemm/small_m (F8) and fp8_gemm/ptpc, and the general GEMM at small M
// (fp8_gemm_general_launch, fp8_gemm_general_takes_mma). It keeps the matrix-unit structure of the
// wgmma variant: each 128-K block's partial comes from the matrix unit (its fp8 accumulation is not
// IEEE fp32), and the partials are added into one fp32 accumulator in ascending K, so the
// emulation is fp8_gemm_blocked_emu and the claim against it is the matrix-unit bound (as for
// wgmma), not bitwise. Run to run: the same bytes (fixed mapping, no
// atomics).
//
// Why: the canonical small-M kernel spends 16 CUDA-core fma per weight chunk and row (with A read
// from shared memory) and measured 6 % of copy at M = 16 (kernels/fp8_gemm/README.md); one
// m16n8k32 MMA does 4096 multiply-adds.
//
// Why here too: the wgmma kernel's 64 x 128 tiles give 12 CTAs at N = 1536 and M <= 64 (83 us at
// M = 1 on the H200, 107 at M = 192); this one gives N / 16 CTAs per 16-row chunk of A.
//
// Mapping. A CTA of 8 warps owns 16 output columns (the MMA's 16 rows: weight rows n0 .. n0 + 15)
// and one chunk of A's rows (blockIdx.y; the MMA's 8 columns are tokens: a chunk is one token tile
// of 8 rows when M <= 8, else two tiles, 16 rows; chunks past the first re-read the weights, mostly
// from L2). K is cut into
// 128-K blocks; in each round warp w takes blocks w, w + 8, ... (kBlocksPerWarp of them, every
// load of the round issued before the first MMA), forms each block's partial with 4 MMAs from a
// zero accumulator, and writes it to shared memory; then one thread per (column, row) adds the
// round's partials in ascending block order to its fp32 accumulator. The epilogue is the family's
// (fp8_gemm_epilogue).
//
// Fragments (PTX ISA, "mma.m16n8k32", 8-bit types; lane = 4 group + quad): A a0 = (row group,
// k 4q..4q+3), a1 = (row group + 8, same k), a2 = (row group, k 16 + 4q..), a3 = (row group + 8,
// k 16 + 4q..); B b0 = (k 4q.., column group), b1 = (k 16 + 4q.., column group); C c0, c1 = (row
// group, columns 2q, 2q + 1), c2, c3 = (row group + 8, columns 2q, 2q + 1). A block partial is the
// sum over the block's 128 k, so the kernel feeds the MMAs a permutation of k, the same for A and
// B: lane quad q loads bytes 32q .. 32q + 31 of the block (two 16-byte loads per row) and gives
// bytes 32q + 8j .. + 3 to logical k 4q.. and + 4 .. + 7 to 16 + 4q.. of MMA j (j = 0..3): the 4
// quads x 4 MMAs x 8 bytes cover the 128 bytes once.
#include "core/errors.hpp"
#include "kernels/common/flag_probe.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"

#include <mutex>
#include <string>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define FB_F8_MMA_AVAILABLE 1
#else
#define FB_F8_MMA_AVAILABLE 0
#endif

namespace fb {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kColumns = 16;  // output columns per CTA: the MMA's 16 rows

// Blocks a warp takes per round: all of K = 6144 in one round at one token tile (48 blocks); two
// rounds at two (the round's B fragments double).
template <int kTiles>
constexpr int blocks_per_warp() {
  return kTiles == 1 ? 6 : 3;
}

__device__ inline void mma_e4m3(const uint4& a, std::uint32_t b0, std::uint32_t b1, float (&c)[4]) {
#if FB_F8_MMA_AVAILABLE
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
#else
  (void)a, (void)b0, (void)b1, (void)c;
#endif
}

// 32 bytes of row `row` of a [rows][K] fp8 matrix at byte k (zeros for a row past `rows`).
__device__ inline void load32(const std::uint8_t* m, std::int64_t rows, std::int64_t depth, std::int64_t row,
                              std::int64_t k, uint4 (&out)[2]) {
  out[0] = out[1] = make_uint4(0, 0, 0, 0);
  if (row < rows) {
    const uint4* p = reinterpret_cast<const uint4*>(m + row * depth + k);
    out[0] = p[0];
    out[1] = p[1];
  }
}

// 32-bit word w (0..7) of a lane's 32 bytes.
__device__ inline std::uint32_t word_of(const uint4 (&v)[2], int w) {
  const uint4& h = v[w / 4];
  const int i = w % 4;
  return i == 0 ? h.x : i == 1 ? h.y : i == 2 ? h.z : h.w;
}

template <int kTiles>
__global__ __launch_bounds__(kThreads) void fp8_gemm_mma_kernel(Fp8GemmParams p, Fp8GemmBuffers b) {
  constexpr int kBpw = blocks_per_warp<kTiles>();
  constexpr int kRoundBlocks = kWarps * kBpw;
  constexpr int kTokens = 8 * kTiles;
  // The round's partials: [block][token][column].
  __shared__ float partial[kRoundBlocks * kTokens * kColumns];

  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int group = lane / 4, quad = lane % 4;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kColumns;
  // This CTA's chunk of A's rows: rows m0 .. m0 + rows - 1, as rows 0 .. rows - 1 of a smaller A.
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kTokens;
  const std::int64_t rows = p.rows - m0 < kTokens ? p.rows - m0 : kTokens;
  const std::uint8_t* a_rows = b.a + m0 * p.depth;
  const std::int64_t blocks = p.depth / kFp8GemmBlockK;
  // The finisher of (column fc, token ft): threads 0 .. 16 kTokens - 1.
  const int fc = static_cast<int>(threadIdx.x % kColumns), ft = static_cast<int>(threadIdx.x / kColumns);
  float acc = 0.0f;

  for (std::int64_t round0 = 0; round0 < blocks; round0 += kRoundBlocks) {
    // Every operand of this warp's blocks of the round, in flight before the first MMA.
    uint4 w_lo[kBpw][2], w_hi[kBpw][2], x[kBpw][kTiles][2];
#pragma unroll
    for (int i = 0; i < kBpw; ++i) {
      const std::int64_t blk = round0 + warp + static_cast<std::int64_t>(i) * kWarps;
      const std::int64_t k = (blk < blocks ? blk : 0) * kFp8GemmBlockK + 32 * quad;
      load32(b.b, blk < blocks ? p.cols : 0, p.depth, n0 + group, k, w_lo[i]);
      load32(b.b, blk < blocks ? p.cols : 0, p.depth, n0 + group + 8, k, w_hi[i]);
#pragma unroll
      for (int t = 0; t < kTiles; ++t) load32(a_rows, blk < blocks ? rows : 0, p.depth, 8 * t + group, k, x[i][t]);
    }
#pragma unroll
    for (int i = 0; i < kBpw; ++i) {
      const std::int64_t blk = round0 + warp + static_cast<std::int64_t>(i) * kWarps;
      if (blk >= blocks) continue;  // warp-uniform
      const int slot = warp + i * kWarps;
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint4 a = make_uint4(word_of(w_lo[i], 2 * j), word_of(w_hi[i], 2 * j), word_of(w_lo[i], 2 * j + 1),
                                     word_of(w_hi[i], 2 * j + 1));
          mma_e4m3(a, word_of(x[i][t], 2 * j), word_of(x[i][t], 2 * j + 1), c);
        }
        float* out = partial + slot * kTokens * kColumns;
        out[(8 * t + 2 * quad) * kColumns + group] = c[0];
        out[(8 * t + 2 * quad + 1) * kColumns + group] = c[1];
        out[(8 * t + 2 * quad) * kColumns + group + 8] = c[2];
        out[(8 * t + 2 * quad + 1) * kColumns + group + 8] = c[3];
      }
    }
    __syncthreads();
    // The round's partials into the accumulator, in ascending block order (slot = block - round0).
    if (ft < kTokens) {
      const std::int64_t in_round = blocks - round0 < kRoundBlocks ? blocks - round0 : kRoundBlocks;
      for (int s = 0; s < in_round; ++s) acc = acc + partial[(s * kTokens + ft) * kColumns + fc];
    }
    __syncthreads();  // the next round overwrites the partials
  }
  const std::int64_t n = n0 + fc;
  if (ft < kTokens && ft < rows && n < p.cols)
    b.c[(m0 + ft) * p.cols + n] = fp8_gemm_epilogue(acc, b.b_scale[n], b.a_scale[m0 + ft]);
}

__global__ void mma_probe_kernel(int* out) { *out = FB_F8_MMA_AVAILABLE; }

std::string probe() {
#if defined(__HIPCC__)
  return "no mma.sync on AMD";  // not reached: the HIP build runs the MFMA kernel (below)
#else
  return run_flag_probe(mma_probe_kernel, "fp8 MMA", "this build has no sm_89+ code for this device (mma.sync e4m3)");
#endif
}

}  // namespace

std::string fp8_gemm_mma_unavailable(const Fp8GemmParams& p) {
#if defined(__HIPCC__)
  return fp8_gemm_mfma_unavailable(p);  // the variant's AMD kernel
#endif
  if (p.flavour != Fp8Flavour::e4m3fn) return "mma.sync takes OCP e4m3 only (fp8=e4m3fnuz)";
  if (p.depth % kFp8GemmBlockK != 0) return "the fp8 MMA kernel needs K % 128 == 0 (K=" + std::to_string(p.depth) + ")";
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] { why = probe(); });
  return why;
}

void fp8_gemm_mma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
#if defined(__HIPCC__)
  fp8_gemm_mfma_launch(p, b, stream);
  return;
#endif
  const std::string why = fp8_gemm_mma_unavailable(p);
  if (!why.empty()) throw DeviceError("fp8_gemm_mma: " + why);
  if (p.rows == 0 || p.cols == 0) return;
  const auto columns = static_cast<unsigned>((p.cols + kColumns - 1) / kColumns);
  const int tokens = p.rows <= 8 ? 8 : 16;  // rows per chunk (one or two token tiles)
  const std::int64_t chunks = (p.rows + tokens - 1) / tokens;
  if (chunks > 65535) throw InputError("the fp8 MMA kernel takes at most 65535 row chunks (M=" + std::to_string(p.rows) + ")");
  const dim3 grid(columns, static_cast<unsigned>(chunks));
  auto s = static_cast<hipStream_t>(stream);
  if (tokens == 8)
    fp8_gemm_mma_kernel<1><<<grid, kThreads, 0, s>>>(p, b);
  else
    fp8_gemm_mma_kernel<2><<<grid, kThreads, 0, s>>>(p, b);
  gpu_check_launch("fp8_gemm_mma_kernel");
}

}  // namespace fb
