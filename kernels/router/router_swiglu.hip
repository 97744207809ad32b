// F3's fused launch: router GEMV work items and F2 producer blocks in one grid (router_swiglu.hpp).
// Router blocks come first (each streams a slice of W, the longer job), F2 blocks after them. A
// block takes one role for its whole life, so each role's barriers are reached by all its threads.
// F2's blocks hold 3 chunks per thread (swiglu_fp8_fused.hip measured 3 to lead at decode and
// prefill-chunk sizes); the results never depend on the row shape.
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/router/router_gemv_map.hpp"
#include "kernels/router/router_device.hpp"
#include "kernels/router/router_swiglu.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kRowTile = 8;
constexpr int kRowCached = 3;
static_assert(kRouterThreads == kSwigluRowBlock, "one block size for both roles");

// kWide (past 16 rows, router_gemv_plan): the router blocks run the chain's wide item at its row
// tile (two experts per lane group, fp32 x staged in shared memory), as the chain's GEMV does; the
// lean item below it kept F2's occupancy but made F3 slower than its chain wherever the GEMV leads
// (run 42: -1.1 % decode, -7.6 % prefill in the layer). The wide instance's registers and shared
// memory hold the F2 blocks to fewer per SM; at these sizes the GEMV is the longer job.
template <RouterWeight kW, class Format, int kRowThreads, bool kPerToken, bool kWide = false, int kTile = kRowTile>
__global__ __launch_bounds__(kRouterThreads) void router_swiglu_kernel(const std::uint16_t* x, const void* w,
                                                                       float* partials, RouterGemvShape sh,
                                                                       const std::uint16_t* gate_up, Fp8Outputs dst,
                                                                       std::int64_t d) {
  const int router_blocks = sh.items();
  if (static_cast<int>(blockIdx.x) < router_blocks) {
    if constexpr (kWide) {
      __shared__ float4 xs[router_gemv_wide_stage_bytes(kTile) / 16];
      router_gemv_wide_item<kW, kTile>(x, w, partials, sh, static_cast<int>(blockIdx.x), reinterpret_cast<float*>(xs));
    } else {
      router_gemv_item<kW, kRowTile, false>(x, w, partials, sh, static_cast<int>(blockIdx.x));  // lean: F2's occupancy
    }
  } else {
    swiglu_fp8_rows<Format, true, true, kRowThreads, kRowCached, kPerToken>(gate_up, nullptr, dst, d,
                                                                            blockIdx.x - router_blocks);
  }
}

}  // namespace

void router_swiglu_fused_launch(const RouterSwigluParams& p, const RouterSwigluBuffers& b, void* stream) {
  const SwigluFp8Params& s = p.swiglu;
  const Fp8Outputs dst{b.swiglu.q, b.swiglu.scales, s.rows, s.scale_format, s.layout};
  const RouterGemvPlan plan = router_gemv_plan(static_cast<int>(p.router.rows), static_cast<int>(p.router.experts),
                                               static_cast<int>(p.router.split_k), device_multiprocessors());
  const bool wide = plan.item_experts != kRouterGemvGroups;
  auto* st = static_cast<hipStream_t>(stream);
  with_router_weight(p.router.weight, [&](auto weight) {
    with_fp8_format(s.flavour, [&](auto format) {
      with_row_threads(swiglu_chunks_per_row(s.d), kRowCached, [&](auto row_threads) {
        constexpr RouterWeight kW = decltype(weight)::value;
        using Format = decltype(format);
        constexpr int kThreads = decltype(row_threads)::value;
        // Per token, F2's row group is the row's threads; a 1x128 row spans at least a wave
        // (swiglu_fp8_fused.hip).
        const auto launch = [&](auto per_token, auto is_wide, auto tile) {
          constexpr bool kPerToken = decltype(per_token)::value, kWide = decltype(is_wide)::value;
          constexpr int kTile = decltype(tile)::value;
          constexpr int kGroupThreads = kPerToken || kThreads >= kWidestWave ? kThreads : kWidestWave;
          const RouterGemvShape sh = kWide ? router_gemv_shape(p.router, kTile, plan.item_experts)
                                           : router_gemv_shape(p.router, kRowTile);
          const unsigned grid = static_cast<unsigned>(sh.items()) + grid_for(s.rows, kRouterThreads / kGroupThreads);
          router_swiglu_kernel<kW, Format, kGroupThreads, kPerToken, kWide, kTile>
              <<<grid, kRouterThreads, 0, st>>>(b.router.x, b.router.w, b.router.partials, sh, b.swiglu.gate_up, dst, s.d);
        };
        const auto with_shape = [&](auto per_token) {
          if (!wide)
            launch(per_token, std::false_type{}, std::integral_constant<int, kRowTile>{});
          else if (plan.row_tile == 16)
            launch(per_token, std::true_type{}, std::integral_constant<int, 16>{});
          else
            launch(per_token, std::true_type{}, std::integral_constant<int, 8>{});
        };
        if (s.granularity == Fp8Granularity::per_token)
          with_shape(std::true_type{});
        else
          with_shape(std::false_type{});
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
