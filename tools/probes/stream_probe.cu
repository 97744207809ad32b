// How fast can one kernel stream a decode-sized weight (the F8 weight 9.4 MB, the router's fp32 W
// 3.1 MB) on this GPU, as a function of the grid and of the bytes each thread keeps in flight?
// The decode kernels (F8, the router GEMV) are one wave of blocks that each read their slice of
// a weight once; this probe times exactly that access pattern with no arithmetic, so a kernel's
// distance from the probe's best cell is its own cost, and the probe's best cell is the floor.
//
//   nvcc -O3 -std=c++17 --generate-code=arch=compute_90a,code=sm_90a tools/probes/stream_probe.cu -o /tmp/stream_probe
//   /tmp/stream_probe > stream_probe.md
//
// Each block reads a contiguous slice of bytes / blocks; a thread issues `loads` 16-byte loads
// (consecutive threads, consecutive 16 bytes: full sectors) before it uses any, in rounds until
// the slice is done, and folds them into one word so nothing is optimised away. Times, medians of
// 25 samples: "warm", graph replay of 20 launches on one copy of the weight (it stays in L2);
// "rotate", graph replay of 16 launches over 8 copies (as fusebench's graph mode rotates its input
// sets, weights included, so that the sets not in use exceed the L2: for 9.4 MB the weight comes
// from DRAM, this is the floor to set a decode kernel's bench time against); "cold", one launch
// after a 256 MB write that evicts L2, timed with events around it (launch latency included).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "stream_probe: %s: %s\n", #x, cudaGetErrorString(e_));       \
      std::exit(2);                                                                     \
    }                                                                                   \
  } while (0)

// kHint: every load as ld.global.nc.L1::no_allocate.L2::256B (read-only path, no L1 allocation,
// the L2 fetching 256-byte runs from DRAM), the form streaming kernels use for weights.
template <bool kHint>
__device__ inline uint4 load16(const uint4* p) {
  if constexpr (kHint) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  } else {
    return *p;
  }
}

template <int kLoads, bool kHint = false>
__global__ void stream_kernel(const uint4* __restrict__ src, long long pieces, unsigned* sink) {
  const long long per_block = (pieces + gridDim.x - 1) / gridDim.x;
  const long long begin = blockIdx.x * per_block;
  const long long end = begin + per_block < pieces ? begin + per_block : pieces;
  unsigned fold = 0;
  for (long long base = begin; base < end; base += static_cast<long long>(kLoads) * blockDim.x) {
    uint4 v[kLoads];
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const long long at = base + static_cast<long long>(i) * blockDim.x + threadIdx.x;
      v[i] = at < end ? load16<kHint>(src + at) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < kLoads; ++i) fold ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
  }
  if (fold == 0x9e3779b9u) *sink = fold;  // never true for the probe's data; keeps the loads
}

__global__ void evict_kernel(uint4* dst, long long pieces) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < pieces;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    dst[i] = make_uint4(static_cast<unsigned>(i), 1, 2, 3);
}

using Launch = void (*)(const uint4*, long long, unsigned*, int, int, cudaStream_t);
template <int kLoads, bool kHint = false>
void launch(const uint4* src, long long pieces, unsigned* sink, int blocks, int threads, cudaStream_t s) {
  stream_kernel<kLoads, kHint><<<blocks, threads, 0, s>>>(src, pieces, sink);
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A graph of `calls` launches (enqueue(i) puts launch i on the stream), instantiated and run once.
template <class Enqueue>
cudaGraphExec_t capture(cudaStream_t s, int calls, Enqueue enqueue) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) enqueue(i);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaGraphLaunch(exec, s));
  return exec;
}

// Median over 25 samples of (before(); events around body()) in us, divided by `calls`.
template <class Before, class Body>
float time_us(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int calls, Before before, Body body) {
  std::vector<float> t;
  for (int r = 0; r < 25; ++r) {
    before();
    CHECK(cudaEventRecord(e0, s));
    body();
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.0f / static_cast<float>(calls));
  }
  return median(t);
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long weight_bytes[] = {9437184LL, 3145728LL};  // F8 1536 x 6144 e4m3; router 128 x 6144 fp32
  const long long evict_bytes = 256LL << 20;
  uint4 *src = nullptr, *evict = nullptr;
  unsigned* sink = nullptr;
  constexpr int kCopies = 8;
  CHECK(cudaMalloc(&src, kCopies * weight_bytes[0]));
  CHECK(cudaMalloc(&evict, evict_bytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMemset(src, 0x11, kCopies * weight_bytes[0]));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));

  const struct {
    int loads;
    bool hint;
    Launch fn;
  } variants[] = {{2, false, launch<2>}, {4, false, launch<4>}, {8, false, launch<8>}, {16, false, launch<16>},
                  {4, true, launch<4, true>}, {8, true, launch<8, true>}};
  const int grids[] = {64, 96, sms, 2 * sms, 3 * sms, 4 * sms, 8 * sms};
  const int threads_of[] = {128, 256};

  std::printf("# stream_probe: %s, %d SMs\n\n", prop.name, sms);
  std::printf("| MB | blocks | threads | bytes in flight / thread | L2::256B | warm us | warm TB/s | rotate us | rotate TB/s | cold us | cold TB/s |\n");
  std::printf("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (long long bytes : weight_bytes) {
    const long long pieces = bytes / 16;
    for (int blocks : grids)
      for (int threads : threads_of)
        for (const auto& v : variants) {
          const auto none = [] {};
          // warm: a graph of 20 launches on one copy; rotate: 16 launches over kCopies copies
          cudaGraphExec_t warm_graph = capture(s, 20, [&](int) { v.fn(src, pieces, sink, blocks, threads, s); });
          cudaGraphExec_t rotate_graph =
              capture(s, 16, [&](int i) { v.fn(src + (i % kCopies) * pieces, pieces, sink, blocks, threads, s); });
          const float ro = time_us(s, e0, e1, 16, none, [&] { CHECK(cudaGraphLaunch(rotate_graph, s)); });
          const float w = time_us(s, e0, e1, 20, none, [&] { CHECK(cudaGraphLaunch(warm_graph, s)); });
          const float c = time_us(
              s, e0, e1, 1, [&] { evict_kernel<<<4 * sms, 512, 0, s>>>(evict, evict_bytes / 16); },
              [&] { v.fn(src, pieces, sink, blocks, threads, s); });
          CHECK(cudaGetLastError());
          CHECK(cudaGraphExecDestroy(warm_graph));
          CHECK(cudaGraphExecDestroy(rotate_graph));
          std::printf("| %.1f | %d | %d | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", bytes / 1048576.0, blocks,
                      threads, 16 * v.loads, v.hint ? "yes" : "no", w, bytes / (w * 1e6), ro, bytes / (ro * 1e6), c, bytes / (c * 1e6));
        }
  }
  // The floor: an empty launch in the same graph form.
  cudaGraphExec_t empty = capture(s, 20, [&](int) { launch<2>(src, 0, sink, 1, 32, s); });
  std::printf("\nempty launch, graph of 20: %.2f us per launch\n",
              time_us(s, e0, e1, 20, [] {}, [&] { CHECK(cudaGraphLaunch(empty, s)); }));
  CHECK(cudaGraphExecDestroy(empty));
  return 0;
}
