// F3's fused launch: router GEMV work items and F2 producer blocks in one grid (router_swiglu.hpp).
// Router blocks come first (each streams a slice of W, the longer job), F2 blocks after them. A
// block takes one role for its whole life, so each role's barriers are reached by all its threads.
// F2's blocks hold 3 chunks per thread (swiglu_fp8_fused.hip measured 3 to lead at decode and
// prefill-chunk sizes); the results never depend on the row shape.
#include "kernels/common/gpu_check.hpp"
#include "kernels/router/router_device.hpp"
#include "kernels/router/router_swiglu.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kRowTile = 8;
constexpr int kRowCached = 3;
static_assert(kRouterThreads == kSwigluRowBlock, "one block size for both roles");

template <RouterWeight kW, class Format, int kRowThreads, bool kPerToken>
__global__ __launch_bounds__(kRouterThreads) void router_swiglu_kernel(const std::uint16_t* x, const void* w,
                                                                       float* partials, RouterGemvShape sh,
                                                                       const std::uint16_t* gate_up, Fp8Outputs dst,
                                                                       std::int64_t d) {
  const int router_blocks = sh.items();
  if (static_cast<int>(blockIdx.x) < router_blocks)
    router_gemv_item<kW, kRowTile, false>(x, w, partials, sh, static_cast<int>(blockIdx.x));  // lean: F2's occupancy
  else
    swiglu_fp8_rows<Format, true, true, kRowThreads, kRowCached, kPerToken>(gate_up, nullptr, dst, d,
                                                                            blockIdx.x - router_blocks);
}

}  // namespace

void router_swiglu_fused_launch(const RouterSwigluParams& p, const RouterSwigluBuffers& b, void* stream) {
  const SwigluFp8Params& s = p.swiglu;
  const Fp8Outputs dst{b.swiglu.q, b.swiglu.scales, s.rows, s.scale_format, s.layout};
  const RouterGemvShape sh = router_gemv_shape(p.router, kRowTile);
  auto* st = static_cast<hipStream_t>(stream);
  with_router_weight(p.router.weight, [&](auto weight) {
    with_fp8_format(s.flavour, [&](auto format) {
      with_row_threads(swiglu_chunks_per_row(s.d), kRowCached, [&](auto row_threads) {
        constexpr RouterWeight kW = decltype(weight)::value;
        using Format = decltype(format);
        constexpr int kThreads = decltype(row_threads)::value;
        if (s.granularity == Fp8Granularity::per_token) {
          const unsigned grid = static_cast<unsigned>(sh.items()) + grid_for(s.rows, kRouterThreads / kThreads);
          router_swiglu_kernel<kW, Format, kThreads, true>
              <<<grid, kRouterThreads, 0, st>>>(b.router.x, b.router.w, b.router.partials, sh, b.swiglu.gate_up, dst, s.d);
        } else {  // a 1x128 row spans at least a wave (swiglu_fp8_fused.hip)
          constexpr int kGroupThreads = kThreads < kWidestWave ? kWidestWave : kThreads;
          const unsigned grid = static_cast<unsigned>(sh.items()) + grid_for(s.rows, kRouterThreads / kGroupThreads);
          router_swiglu_kernel<kW, Format, kGroupThreads, false>
              <<<grid, kRouterThreads, 0, st>>>(b.router.x, b.router.w, b.router.partials, sh, b.swiglu.gate_up, dst, s.d);
        }
      });
    });
  });
  gpu_check_launch("router_swiglu_kernel");
  router_gate_partials_launch(p.router, b.router, stream);
}

void router_swiglu_chain_launch(const RouterSwigluParams& p, const RouterSwigluBuffers& b, void* stream) {
  router_chain_launch(p.router, b.router, stream);
  swiglu_fp8_fused_launch(p.swiglu, b.swiglu, stream);
}

}  // namespace fb
