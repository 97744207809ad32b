// Is stage 1 of the MoE GEMMs at decode bound by its weight stream or by its own instructions?
// Run 47 timed the exact stage 1 at T = 3 (12 sort blocks of one token, 12 experts' W13: 60 MB) at
// 54.4 us in graph replay, 1.1 TB/s, a quarter of a plain copy; Nsight (run 44p) saw few stalls
// on memory. This probe runs the real warp code (moe_stage1_exact_warp, moe_gemm_exact.hpp) in a
// kernel of the launcher's shape on synthetic inputs, twice:
//   cold  each launch's 12 sort blocks name 12 experts no other launch of the graph uses, so every
//         weight byte comes from DRAM (the bench's situation);
//   hot   every sort block names expert 0 (5 MB of W13, resident in L2 after the first launch).
// The same instructions run in both; if hot is far faster the kernel waits on DRAM (bytes in
// flight), if not, on its own instruction chain. Both mappings (narrow: 8 output columns a warp,
// the launcher's choice at T = 3; wide: 16) are timed. Graph replay of 10 launches, medians of 15.
// (Run 55 found hot within 5 % of cold: the chain, not the stream; README of kernels/moe_gemm.)
// `--once` runs one cold narrow launch (for Nsight Compute) and exits.
//
// Built with the project's GPU flags:
//   nvcc -O3 -std=c++17 --generate-code=arch=compute_90a,code=sm_90a -I. -DFUSEBENCH_HAS_GPU=1 \
//     --expt-relaxed-constexpr --fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
//     tools/probes/moe_stage1_probe.cu -o /tmp/moe_probe && /tmp/moe_probe > moe_probe.md
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/moe_gemm/moe_gemm_exact.hpp"

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "moe_stage1_probe: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

using namespace fb;

namespace {

constexpr std::int64_t kT = 3, kTopk = 4, kE = 128, kK = 6144, kI = 768, kB = 32;
constexpr std::int64_t kSortBlocks = kT * kTopk;  // one token a block (uniform routing at T = 3)
constexpr int kLaunches = 10;                     // 10 x 12 = 120 distinct experts in the cold graph

// The launcher's kernel (moe_gemm_stage1.hip), swiglu_oai.
template <bool kNarrow>
__global__ __launch_bounds__(128, 4) void moe_stage1_probe_kernel(Stage1Args a) {
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;
  __shared__ std::int32_t entries[128];
  for (int r = threadIdx.x; r < a.block; r += blockDim.x)
    entries[r] = first + r < valid ? a.sorted_token_ids[first + r] : kPadEntry;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x / 32), warp = static_cast<int>(threadIdx.x / 32);
  constexpr int kCols = kNarrow ? kStage1NarrowCols : kStage1Cols;
  moe_stage1_exact_warp<true, kNarrow>(a, entries, first, a.sorted_expert_ids[blockIdx.y],
                                       (static_cast<std::int64_t>(blockIdx.x) * warps + warp) * kCols,
                                       static_cast<int>(threadIdx.x & 31));
}

template <typename T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Inputs {
  Stage1Args base{};
  std::int32_t* experts_cold[kLaunches];
  std::int32_t* experts_hot;
};

Inputs make_inputs() {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), scale(118, 126);
  std::vector<std::uint8_t> w13(static_cast<std::size_t>(kE * 2 * kI * kK / 2)), w13s(static_cast<std::size_t>(kE * 2 * kI * kK / 32));
  for (auto& b : w13) b = static_cast<std::uint8_t>(byte(rng));
  for (auto& b : w13s) b = static_cast<std::uint8_t>(scale(rng));
  std::vector<std::uint8_t> xq(static_cast<std::size_t>(kT * kK / 2)), xs(static_cast<std::size_t>(kSortBlocks * kB * kK / 32));
  for (auto& b : xq) b = static_cast<std::uint8_t>(byte(rng));
  for (auto& b : xs) b = static_cast<std::uint8_t>(scale(rng));
  // Sort block b holds pair (token b / k, slot b % k) in its first row, padding after.
  std::vector<std::int32_t> ids(static_cast<std::size_t>(kSortBlocks * kB), kPadEntry);
  for (std::int64_t b = 0; b < kSortBlocks; ++b)
    ids[static_cast<std::size_t>(b * kB)] = static_cast<std::int32_t>((b / kTopk) | ((b % kTopk) << 24));
  Inputs in;
  in.base.sorted_token_ids = upload(ids);
  in.base.num_valid_ids = upload(std::vector<std::int32_t>{static_cast<std::int32_t>(kSortBlocks * kB)});
  in.base.xq = upload(xq);
  in.base.x_scales = upload(xs);
  in.base.w13 = upload(w13);
  in.base.w13_scales = upload(w13s);
  std::uint16_t* a1 = nullptr;
  CHECK(cudaMalloc(&a1, static_cast<std::size_t>(kT * kTopk * kI) * 2));
  in.base.a1 = a1;
  in.base.tokens = kT;
  in.base.topk = kTopk;
  in.base.block = kB;
  in.base.hidden = kK;
  in.base.inter = kI;
  in.base.max_entries = kT * kTopk + kE * kB - kTopk;
  for (int l = 0; l < kLaunches; ++l) {
    std::vector<std::int32_t> e(static_cast<std::size_t>(kSortBlocks));
    for (std::int64_t b = 0; b < kSortBlocks; ++b) e[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(l * kSortBlocks + b);
    in.experts_cold[l] = upload(e);
  }
  in.experts_hot = upload(std::vector<std::int32_t>(static_cast<std::size_t>(kSortBlocks), 0));
  return in;
}

template <bool kNarrow>
void launch(Stage1Args a, cudaStream_t s) {
  constexpr int cols = kNarrow ? kStage1NarrowCols : kStage1Cols;
  const int warps = moe_exact_warps(kI, cols);
  const dim3 grid(static_cast<unsigned>(kI / (cols * warps)), static_cast<unsigned>(kSortBlocks));
  moe_stage1_probe_kernel<kNarrow><<<grid, 32 * warps, 0, s>>>(a);
}

// Median us per launch over 15 replays of a graph of kLaunches launches.
template <bool kNarrow>
double time_graph(const Inputs& in, bool hot, cudaStream_t s) {
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int l = 0; l < kLaunches; ++l) {
    Stage1Args a = in.base;
    a.sorted_expert_ids = hot ? in.experts_hot : in.experts_cold[l];
    launch<kNarrow>(a, s);
  }
  CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::vector<double> us;
  for (int rep = 0; rep < 17; ++rep) {
    CHECK(cudaEventRecord(t0, s));
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaEventRecord(t1, s));
    CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (rep >= 2) us.push_back(1000.0 * ms / kLaunches);
  }
  std::sort(us.begin(), us.end());
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(g));
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::strcmp(argv[1], "--once") == 0;
  Inputs in = make_inputs();
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  if (once) {  // one cold launch of the narrow mapping, for Nsight Compute
    Stage1Args a = in.base;
    a.sorted_expert_ids = in.experts_cold[0];
    launch<true>(a, s);
    CHECK(cudaStreamSynchronize(s));
    return 0;
  }
  // W13 and its scales of the 12 experts one launch reads.
  const double mb = static_cast<double>(kSortBlocks) * (2 * kI * kK / 2 + 2 * kI * kK / 32) / 1e6;
  std::printf("# moe stage 1 at T = 3: weight stream or instruction chain?\n\n");
  std::printf("12 sort blocks of one token, %.1f MB of W13 and scales a launch; graph replay of %d launches, "
              "median of 15 replays.\n\n", mb, kLaunches);
  std::printf("| mapping | cold (us) | hot (us) | cold / hot | cold GB/s |\n|---|---:|---:|---:|---:|\n");
  const auto row = [&](const char* mapping, double cold, double hot) {
    std::printf("| %s | %.2f | %.2f | %.2f | %.0f |\n", mapping, cold, hot, cold / hot, mb * 1e3 / cold);
  };
  row("narrow", time_graph<true>(in, false, s), time_graph<true>(in, true, s));
  row("wide", time_graph<false>(in, false, s), time_graph<false>(in, true, s));
  CHECK(cudaGetLastError());
  return 0;
}
