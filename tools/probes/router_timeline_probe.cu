// Where the one-launch router's time goes at decode (M = 1..16): run 46 timed the fused router
// (GEMV + the last block's gate) at 8.7-9.1 us per call in graph replay at M = 1, against 1.9 us
// for a plain stream of its 3.1 MB weight, and Nsight put the kernel at 5.8 us with its GEMV blocks
// done by 3.1 us. This probe runs the real pieces (kernels/router/router_device.hpp: the GEMV item,
// the waiting-free ticket, the last block's partial sums and gate) in a kernel of the same shape as
// router_gemv_kernel<f32, tile, GemvTail::gate>, and stamps each phase:
//   %globaltimer (ns, one clock for all SMs) at every block's start and GEMV end, at the last
//   block's ticket and at its end; clock64 (the SM's cycles) inside the last block around the
//   partial sums and the gate.
// Tails, each a separate kernel instance (the deltas between them are what each piece costs):
//   stream  the floor: each block loads the weight bytes its GEMV item reads, nothing else
//   gemv    the GEMV items alone (partials written, no ticket)
//   ticket  + the ticket (every block fences and draws it; the last block stops there)
//   logits  + the last block sums the partials into logits (staged in shared memory)
//   gate    + the gate of every row: the fused router's launch
//   twice   gate, then the same partial sums and gate again (one loop, not unrolled: the same code),
//           so the second pass shows what the first paid for cold instruction and data caches
// A second table splits the gate (router_gate_rows' FB_ROUTER_GATE_STAMP hook) into its phases.
// Timing: graph replay of 48 launches, each on its own copy of W (48 x 3.1 MB exceeds the L2, as
// fusebench's graph mode rotates input sets), and "warm" (one copy, in L2); medians of 15 replays.
// The stamps come from one replay of the rotating graph, every launch its own stamp slot; the table
// gives medians over the 48 launches of: first block start -> last GEMV end ("gemv"), last GEMV end
// -> the last block past its ticket ("handoff"), ticket -> end ("tail"), kernel end -> next
// launch's first block start ("gap"), and the tail's cycles by phase.
//
// Built with the project's GPU flags (no fma contraction, IEEE division), as the kernels are:
//   nvcc -O3 -std=c++17 --generate-code=arch=compute_90a,code=sm_90a -I. -DFUSEBENCH_HAS_GPU=1 \
//     --expt-relaxed-constexpr --fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
//     tools/probes/router_timeline_probe.cu -o /tmp/router_probe && /tmp/router_probe > router_probe.md
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// The gate's own phases (router_gate_rows' hook), thread 0 only: start, probabilities and scores,
// candidates sorted, the rounds, the chosen probabilities fetched. The last launch's values.
__device__ long long probe_gate_clk[5];
#define FB_ROUTER_GATE_STAMP(phase)                       \
  do {                                                    \
    if (threadIdx.x == 0) probe_gate_clk[phase] = clock64(); \
  } while (0)
#include "kernels/router/router_device.hpp"

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "router_probe: %s: %s\n", #x, cudaGetErrorString(e_));     \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

using namespace fb;

namespace {

constexpr int kMaxBlocks = 512;
constexpr int kLaunches = 48;

// One launch's stamps (globaltimer ns unless named _clk).
struct Stamps {
  unsigned long long start[kMaxBlocks], gemv_end[kMaxBlocks];
  unsigned long long ticket, end;
  long long tail_clk[7];  // clock64 at: past the ticket, logits summed, after the barrier, gate done; (twice) again
};

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ unsigned probe_tickets = 0;

enum Tail { kStream = -1, kGemv = 0, kTicket = 1, kLogits = 2, kGate = 3, kTwice = 4 };

template <int kRowTile, int kTail>
__global__ __launch_bounds__(kRouterThreads) void probe_router(const std::uint16_t* x, const float* w, float* partials,
                                                               float* logits, RouterGemvShape sh, RouterGateArgs gate,
                                                               std::int32_t* ids, float* weights, Stamps* st) {
  constexpr int kStageBytes = kRouterTailRows * kRouterMaxExperts * 4;
  constexpr int kGemvBytes = router_gemv_stage_bytes(kRowTile);
  constexpr int kBytes = kGemvBytes > kStageBytes ? kGemvBytes : kStageBytes;
  __shared__ uint4 smem[kBytes / 16];
  if (threadIdx.x == 0) st->start[blockIdx.x] = global_ns();
  const float bias = router_bias_preload(gate);
  if constexpr (kTail == kStream) {
    // The floor: the same weight chunks as the GEMV item (lane l of group g: chunks l, l + 32, ... of
    // expert e's slice, 32 bytes each), loaded and folded into one word, no x, no arithmetic.
    const RouterGemvItem it = router_gemv_item_at(sh, static_cast<int>(blockIdx.x));
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int e = router_gemv_expert(sh, it, static_cast<int>(threadIdx.x / 32), 0);
    const int L = sh.slice(), chunks = L / 8;
    unsigned fold = 0;
#pragma unroll 6
    for (int c = lane; c < chunks; c += 32) {
      float wv[8];
      router_load_weights<RouterWeight::f32>(w, static_cast<std::int64_t>(e) * sh.hidden +
                                                    static_cast<std::int64_t>(it.s) * L + c * 8, wv);
#pragma unroll
      for (int j = 0; j < 8; ++j) fold ^= __float_as_uint(wv[j]);
    }
    if (fold == 0x9e3779b9u) partials[0] = 0.0f;  // never for the probe's data; keeps the loads
  } else {
    router_gemv_item<RouterWeight::f32, kRowTile>(x, w, partials, sh, static_cast<int>(blockIdx.x),
                                                  reinterpret_cast<std::uint16_t*>(smem));
  }
  __syncthreads();
  if (threadIdx.x == 0) st->gemv_end[blockIdx.x] = global_ns();
  if constexpr (kTail <= kGemv) return;
  if (!router_last_block(&probe_tickets, gridDim.x)) return;
  if (threadIdx.x == 0) {
    st->ticket = global_ns();
    st->tail_clk[0] = clock64();
  }
  if constexpr (kTail >= kLogits) {
    float* stage = reinterpret_cast<float*>(smem);
    __shared__ float bias_s[kRouterMaxExperts];
    const RouterGateArgs staged = router_stage_bias(gate, bias, bias_s);
    // kTwice: the same code (a loop, not unrolled) runs again, so its second pass shows what the
    // first paid for cold instruction and data caches.
#pragma unroll 1
    for (int pass = 0; pass < (kTail == kTwice ? 2 : 1); ++pass) {
      router_block_logits(partials, logits, sh.rows, sh.experts, sh.split_k, stage);
      if (threadIdx.x == 0) st->tail_clk[3 * pass + 1] = clock64();
      __syncthreads();
      if (threadIdx.x == 0) st->tail_clk[3 * pass + 2] = clock64();
      if constexpr (kTail >= kGate) router_block_gate<true>(staged, stage, ids, weights);
      __syncthreads();
      if (threadIdx.x == 0) st->tail_clk[3 * pass + 3] = clock64();
    }
  }
  if (threadIdx.x == 0) st->end = global_ns();
}

// The smallest non-zero step of %globaltimer seen in back-to-back reads (its resolution here).
__global__ void timer_step_kernel(unsigned long long* out) {
  unsigned long long prev = global_ns(), step = ~0ull;
  for (int i = 0; i < 20000; ++i) {
    const unsigned long long t = global_ns();
    if (t != prev && t - prev < step) step = t - prev;
    prev = t;
  }
  *out = step;
}

__global__ void empty_kernel() {}

__global__ void fill_kernel(float* p, long long n, unsigned seed, float scale) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    p[i] = (static_cast<float>(h & 0xFFFF) / 65536.0f - 0.5f) * scale;
  }
}

__global__ void fill_bf16(std::uint16_t* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u;
    const float v = (static_cast<float>(h & 0xFFFF) / 65536.0f - 0.5f) * 2.0f;
    p[i] = static_cast<std::uint16_t>(__float_as_uint(v) >> 16);
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Enqueue>
cudaGraphExec_t capture(cudaStream_t s, Enqueue enqueue) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kLaunches; ++i) enqueue(i);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  return exec;
}

float replay_us(cudaStream_t s, cudaGraphExec_t g, cudaEvent_t e0, cudaEvent_t e1) {
  std::vector<float> t;
  for (int r = 0; r < 15; ++r) {
    CHECK(cudaEventRecord(e0, s));
    CHECK(cudaGraphLaunch(g, s));
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.0f / kLaunches);
  }
  return median(t);
}

using Kernel = void (*)(const std::uint16_t*, const float*, float*, float*, RouterGemvShape, RouterGateArgs,
                        std::int32_t*, float*, Stamps*);

template <int kTile>
Kernel pick(int tail) {
  switch (tail) {
    case kStream: return probe_router<kTile, kStream>;
    case kGemv: return probe_router<kTile, kGemv>;
    case kTicket: return probe_router<kTile, kTicket>;
    case kLogits: return probe_router<kTile, kLogits>;
    case kGate: return probe_router<kTile, kGate>;
    default: return probe_router<kTile, kTwice>;
  }
}

Kernel kernel_for(int rows, int tail) {
  if (rows <= 1) return pick<1>(tail);
  if (rows <= 2) return pick<2>(tail);
  if (rows <= 4) return pick<4>(tail);
  return pick<8>(tail);
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  constexpr int K = 6144, E = 128, kMaxRows = 16;
  const long long w_elems = static_cast<long long>(E) * K;
  float *w = nullptr, *partials = nullptr, *logits = nullptr, *bias = nullptr, *weights = nullptr;
  std::uint16_t* x = nullptr;
  std::int32_t* ids = nullptr;
  Stamps* stamps = nullptr;
  CHECK(cudaMalloc(&w, kLaunches * w_elems * sizeof(float)));
  CHECK(cudaMalloc(&x, kMaxRows * K * sizeof(std::uint16_t)));
  CHECK(cudaMalloc(&partials, 8 * kMaxRows * E * sizeof(float)));
  CHECK(cudaMalloc(&logits, kMaxRows * E * sizeof(float)));
  CHECK(cudaMalloc(&bias, E * sizeof(float)));
  CHECK(cudaMalloc(&ids, kMaxRows * 8 * sizeof(std::int32_t)));
  CHECK(cudaMalloc(&weights, kMaxRows * 8 * sizeof(float)));
  CHECK(cudaMalloc(&stamps, kLaunches * sizeof(Stamps)));
  fill_kernel<<<1024, 256>>>(w, kLaunches * w_elems, 1u, 2.0f / 78.0f);  // about N(0, 1/K)'s spread
  fill_kernel<<<1, 128>>>(bias, E, 7u, 0.1f);
  fill_bf16<<<64, 256>>>(x, kMaxRows * K, 3u);
  CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double clk_ghz = clock_khz / 1e6;  // nominal; the cycles are reported as cycles

  std::printf("# router_timeline_probe: %s, %d SMs, fp32 W, K = %d, E = %d, sigmoid_bias top-4\n\n", prop.name,
              prop.multiProcessorCount, K, E);
  std::printf("| M | S | tail | blocks | rotate us | warm us | gemv us | handoff us | tail us | gap us | "
              "logits clk | barrier clk | gate clk | logits again clk | gate again clk |\n");
  std::printf("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  struct GatePhases {
    int rows, split;
    long long scores, sort, rounds, fetch;
  };
  std::vector<GatePhases> gate_phases;
  const char* tail_names[] = {"stream", "gemv", "ticket", "logits", "gate", "twice"};
  for (int rows : {1, 3, 8, 16})
    for (int split : {4, 8})
      for (int tail = kStream; tail <= kTwice; ++tail) {
        const int tile = rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : 8;
        RouterGemvShape sh{rows, K, E, split, tile};
        const int blocks = sh.items();
        if (blocks > kMaxBlocks) continue;
        RouterGateArgs gate{rows, E, split, 4, RouterGate::sigmoid_bias, 2.0f, bias};
        Kernel k = kernel_for(rows, tail);
        cudaGraphExec_t rotate = capture(s, [&](int i) {
          k<<<blocks, kRouterThreads, 0, s>>>(x, w + i * w_elems, partials, logits, sh, gate, ids, weights, stamps + i);
        });
        cudaGraphExec_t warm = capture(s, [&](int i) {
          k<<<blocks, kRouterThreads, 0, s>>>(x, w, partials, logits, sh, gate, ids, weights, stamps + i);
        });
        CHECK(cudaGetLastError());
        const float warm_us = replay_us(s, warm, e0, e1);
        const float rotate_us = replay_us(s, rotate, e0, e1);  // the stamps below are this graph's
        std::vector<Stamps> host(kLaunches);
        CHECK(cudaMemcpy(host.data(), stamps, kLaunches * sizeof(Stamps), cudaMemcpyDeviceToHost));
        std::vector<float> gemv, handoff, tl, gap, c_logits, c_bar, c_gate, c_logits2, c_gate2;
        for (int i = 0; i < kLaunches; ++i) {
          const Stamps& h = host[i];
          unsigned long long first = ~0ull, last_gemv = 0, last_any = 0;
          for (int b = 0; b < blocks; ++b) {
            first = std::min(first, h.start[b]);
            last_gemv = std::max(last_gemv, h.gemv_end[b]);
          }
          gemv.push_back((last_gemv - first) / 1e3f);
          last_any = last_gemv;
          if (tail >= kTicket) {
            handoff.push_back((static_cast<long long>(h.ticket) - static_cast<long long>(last_gemv)) / 1e3f);
            last_any = std::max(last_any, h.end);
            tl.push_back((static_cast<long long>(h.end) - static_cast<long long>(h.ticket)) / 1e3f);
          }
          if (tail >= kLogits) {
            c_logits.push_back(static_cast<float>(h.tail_clk[1] - h.tail_clk[0]));
            c_bar.push_back(static_cast<float>(h.tail_clk[2] - h.tail_clk[1]));
            c_gate.push_back(static_cast<float>(h.tail_clk[3] - h.tail_clk[2]));
          }
          if (tail == kTwice) {
            c_logits2.push_back(static_cast<float>(h.tail_clk[4] - h.tail_clk[3]));
            c_gate2.push_back(static_cast<float>(h.tail_clk[6] - h.tail_clk[5]));
          }
          if (i + 1 < kLaunches) {
            unsigned long long next_first = ~0ull;
            for (int b = 0; b < blocks; ++b) next_first = std::min(next_first, host[i + 1].start[b]);
            gap.push_back((static_cast<long long>(next_first) - static_cast<long long>(last_any)) / 1e3f);
          }
        }
        const auto med = [](const std::vector<float>& v) { return v.empty() ? 0.0f : median(v); };
        std::printf("| %d | %d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
                    rows, split, tail_names[tail + 1], blocks, rotate_us, warm_us, med(gemv), med(handoff), med(tl), med(gap),
                    med(c_logits), med(c_bar), med(c_gate), med(c_logits2), med(c_gate2));
        if (tail == kGate) {
          long long g[5];
          CHECK(cudaMemcpyFromSymbol(g, probe_gate_clk, sizeof(g)));
          gate_phases.push_back({rows, split, g[1] - g[0], g[2] - g[1], g[3] - g[2], g[4] - g[3]});
        }
        CHECK(cudaGraphExecDestroy(rotate));
        CHECK(cudaGraphExecDestroy(warm));
      }
  std::printf("\nThe gate's phases in the last launch (thread 0's row, SM cycles): probabilities and scores, "
              "candidates sorted, the selection rounds, the chosen probabilities fetched\n\n");
  std::printf("| M | S | scores | sort | rounds | fetch |\n|---:|---:|---:|---:|---:|---:|\n");
  for (const GatePhases& g : gate_phases)
    std::printf("| %d | %d | %lld | %lld | %lld | %lld |\n", g.rows, g.split, g.scores, g.sort, g.rounds, g.fetch);
  unsigned long long* step = nullptr;
  CHECK(cudaMalloc(&step, sizeof(unsigned long long)));
  timer_step_kernel<<<1, 1>>>(step);
  unsigned long long host_step = 0;
  CHECK(cudaMemcpy(&host_step, step, sizeof(host_step), cudaMemcpyDeviceToHost));
  cudaGraphExec_t empty = capture(s, [&](int) { empty_kernel<<<1, 32, 0, s>>>(); });
  std::printf("\nempty launch in the same graph form: %.2f us; %%globaltimer step %llu ns; SM clock %.2f GHz "
              "nominal (the clk columns are the last block's own clock64 cycles)\n",
              replay_us(s, empty, e0, e1), host_step, clk_ghz);
  return 0;
}
