// The router's plain kernels and the router case's two variants
// (docs/numeric-contract.md#router-gemv-and-gate; orders in router_math.hpp):
//   router_gemv_kernel          one block per work item (row tile, slice, 8 experts; past 16 rows
//                               16 experts, router_gemv_wide_item: router_gemv_plan): partials;
//                               the chain's at M <= 16 also sums them into logits in its last block
//                               (router_last_block: no waiting), so no reduce launch there; the
//                               fused variant's one-launch form (M <= 16: router_fused_form.hpp)
//                               gates every row in its last block (the fused gate's arithmetic)
//   router_reduce_kernel        logits = ((P0 + P1) + P2) + ..., one thread per logit
//   router_gate_kernel<false>   the gate from logits, one 32-lane group per row
//   router_gate_kernel<true>    the fused gate: sums the partials in the reduce's order, writes the
//                               logits and gates them (no reduce launch)
// fused = GEMV + fused gate (2 launches; or 1, the one-launch form, by router_fused_launch_form);
// chain = GEMV + reduce + gate (3 launches; 2 at M <= 16).
#include "core/errors.hpp"
#include "kernels/common/dependent_launch.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/router/router_device.hpp"
#include "kernels/router/router_fused_form.hpp"

namespace fb {
namespace {

// The ticket counter of the GEMV's own fixup: zero at module load, reset by each launch's last block.
__device__ unsigned router_gemv_tickets = 0;
static_assert(kRouterReduceLaunchRows <= kRouterTailRows, "the GEMV's last block stages every row it gates");

// What the GEMV's last block does after every partial is written.
enum class GemvTail { none, logits, gate };

template <RouterWeight kW, int kRowTile, GemvTail kTail, bool kWide = false>
__global__ __launch_bounds__(kRouterThreads) void router_gemv_kernel(const std::uint16_t* x, const void* w,
                                                                     float* partials, float* logits,
                                                                     RouterGemvShape sh, RouterGateArgs gate,
                                                                     std::int32_t* ids, float* weights) {
  // One buffer: the GEMV's x steps, then (the last block, gate tail) the staged logits.
  // kWide: past 16 rows (no tail), the wide item (two experts per lane group, fp32 x): router_gemv_plan.
  static_assert(!kWide || kTail == GemvTail::none, "the tails run at M <= 16 (the narrow item)");
  constexpr int kStageBytes = kTail == GemvTail::gate ? kRouterTailRows * kRouterMaxExperts * 4 : 0;
  constexpr int kGemvBytes = kWide ? router_gemv_wide_stage_bytes(kRowTile) : router_gemv_stage_bytes(kRowTile);
  constexpr int kBytes = kGemvBytes > kStageBytes ? kGemvBytes : kStageBytes;
  __shared__ uint4 smem[kBytes / 16];
  allow_dependent_launch();  // a reduce or gate launched after this one may get resident now (it waits for us)
  const float bias = kTail == GemvTail::gate ? router_bias_preload(gate) : 0.0f;  // before the GEMV (the tail's)
  if constexpr (kWide)
    router_gemv_wide_item<kW, kRowTile>(x, w, partials, sh, static_cast<int>(blockIdx.x), reinterpret_cast<float*>(smem));
  else
    router_gemv_item<kW, kRowTile>(x, w, partials, sh, static_cast<int>(blockIdx.x), reinterpret_cast<std::uint16_t*>(smem));
  if constexpr (kTail == GemvTail::none) return;
  if (!router_last_block(&router_gemv_tickets, gridDim.x)) return;
  if constexpr (kTail == GemvTail::gate) {
    // The fused gate of every row (router_gate_kernel<true>'s arithmetic) from the staged logits
    // (router_last_block's barrier: every thread's GEMV reads of the buffer are done).
    float* stage = reinterpret_cast<float*>(smem);
    __shared__ float bias_s[kRouterMaxExperts];
    const RouterGateArgs staged = router_stage_bias(gate, bias, bias_s);
    router_block_logits(partials, logits, sh.rows, sh.experts, sh.split_k, stage);
    __syncthreads();
    router_block_gate<true>(staged, stage, ids, weights);  // rows g and g + 8 side by side past 8 rows
  } else {
    router_block_logits(partials, logits, sh.rows, sh.experts, sh.split_k, nullptr);  // the reduce's order
  }
}

__global__ void router_reduce_kernel(const float* partials, float* logits, std::int64_t slice, int split_k) {
  allow_dependent_launch();
  grid_dependency_wait();  // the GEMV's partials (launch_after_previous)
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= slice) return;
  const std::int64_t at[1] = {i};
  const bool live[1] = {true};
  float v[1] = {0.0f};
  router_sum_partials<1, false>(partials, slice, split_k, at, live, v);
  logits[i] = v[0];
}

template <bool kFromPartials>
__global__ __launch_bounds__(kRouterThreads) void router_gate_kernel(RouterGateArgs a, const float* partials,
                                                                     float* logits, std::int32_t* ids,
                                                                     float* weights) {
  grid_dependency_wait();  // the partials or logits of the launch before (launch_after_previous)
  const int row = static_cast<int>(blockIdx.x) * kRouterGroups + static_cast<int>(threadIdx.x / 32);
  if (row >= a.rows) return;  // a whole lane group with no row (its shuffles are its own)
  float l[8] = {};
  router_row_logits(a, partials, logits, row, kFromPartials, l);
  std::int32_t* row_ids = ids + static_cast<std::int64_t>(row) * a.topk;
  float* row_weights = weights + static_cast<std::int64_t>(row) * a.topk;
  if (a.experts == 4 * 32)  // V known at compile time for the model's E (router_gate_rows' kV)
    router_gate_row<4>(a, l, true, row_ids, row_weights);
  else
    router_gate_row<0>(a, l, true, row_ids, row_weights);
}

RouterGateArgs gate_args(const RouterParams& p, const RouterBuffers& b) {
  return RouterGateArgs{static_cast<int>(p.rows), static_cast<int>(p.experts), static_cast<int>(p.split_k),
                        static_cast<int>(p.topk), p.gate, p.routed_scaling, b.bias};
}

}  // namespace

namespace {

void gemv_launch(const RouterParams& p, const RouterBuffers& b, GemvTail tail, void* stream) {
  const RouterGemvPlan plan = router_gemv_plan(static_cast<int>(p.rows), static_cast<int>(p.experts),
                                               static_cast<int>(p.split_k), device_multiprocessors());
  auto* s = static_cast<hipStream_t>(stream);
  const RouterGateArgs g = gate_args(p, b);
  with_router_weight(p.weight, [&](auto weight) {
    constexpr RouterWeight kW = decltype(weight)::value;
    if (plan.item_experts != kRouterGroups) {  // past 16 rows: the wide item, no tail
      if (tail != GemvTail::none) throw InputError("the router GEMV's own reduce or gate takes at most 16 rows");
      const auto wide = [&](auto tile) {
        constexpr int kTile = decltype(tile)::value;
        const RouterGemvShape sh = router_gemv_shape(p, kTile, plan.item_experts);
        router_gemv_kernel<kW, kTile, GemvTail::none, true><<<static_cast<unsigned>(sh.items()), kRouterThreads, 0, s>>>(
            b.x, b.w, b.partials, b.logits, sh, g, b.topk_ids, b.topk_weights);
      };
      if (plan.row_tile == 16)
        wide(std::integral_constant<int, 16>{});
      else
        wide(std::integral_constant<int, 8>{});
      return;
    }
    with_router_decode_row_tile(p.rows, [&](auto tile) {
      constexpr int kTile = decltype(tile)::value;
      // Up to 16 rows (the plan's narrow item): tiles 1, 2, 4, 8; no tile-16 instance.
      if constexpr (kTile <= 8) {
        const RouterGemvShape sh = router_gemv_shape(p, kTile);
        const auto grid = static_cast<unsigned>(sh.items());
        if (tail == GemvTail::gate) {
          router_gemv_kernel<kW, kTile, GemvTail::gate>
              <<<grid, kRouterThreads, 0, s>>>(b.x, b.w, b.partials, b.logits, sh, g, b.topk_ids, b.topk_weights);
        } else if (tail == GemvTail::logits) {
          router_gemv_kernel<kW, kTile, GemvTail::logits>
              <<<grid, kRouterThreads, 0, s>>>(b.x, b.w, b.partials, b.logits, sh, g, b.topk_ids, b.topk_weights);
        } else {
          router_gemv_kernel<kW, kTile, GemvTail::none>
              <<<grid, kRouterThreads, 0, s>>>(b.x, b.w, b.partials, b.logits, sh, g, b.topk_ids, b.topk_weights);
        }
      }
    });
  });
  gpu_check_launch("router_gemv_kernel");
}

}  // namespace

void router_gemv_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  gemv_launch(p, b, GemvTail::none, stream);
}

void router_gemv_logits_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  gemv_launch(p, b, GemvTail::logits, stream);
}

// The reduce and the gates read what the launch before them wrote, and are launched to overlap its
// tail (dependent_launch.hpp: on NVIDIA sm_90 their blocks wait on the device, not in the queue).
void router_reduce_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  const std::int64_t slice = p.rows * p.experts;
  launch_after_previous("router_reduce_kernel", router_reduce_kernel, grid_for(slice, kRouterThreads),
                        dim3(kRouterThreads), static_cast<hipStream_t>(stream), b.partials, b.logits, slice,
                        static_cast<int>(p.split_k));
}

void router_gate_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  launch_after_previous("router_gate_kernel", router_gate_kernel<false>, grid_for(p.rows, kRouterGroups),
                        dim3(kRouterThreads), static_cast<hipStream_t>(stream), gate_args(p, b), b.partials, b.logits,
                        b.topk_ids, b.topk_weights);
}

void router_gate_partials_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  launch_after_previous("router_gate_partials_kernel", router_gate_kernel<true>, grid_for(p.rows, kRouterGroups),
                        dim3(kRouterThreads), static_cast<hipStream_t>(stream), gate_args(p, b), b.partials, b.logits,
                        b.topk_ids, b.topk_weights);
}

void router_fused_launch_as(const RouterParams& p, const RouterBuffers& b, RouterFusedForm form, void* stream) {
  if (form == RouterFusedForm::one_launch) {
    gemv_launch(p, b, GemvTail::gate, stream);  // the last block gates every row (past 16 rows: InputError)
    return;
  }
  router_gemv_launch(p, b, stream);
  router_gate_partials_launch(p, b, stream);
}

void router_fused_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  router_fused_launch_as(p, b, router_fused_launch_form(p.rows), stream);
}

void router_chain_launch(const RouterParams& p, const RouterBuffers& b, void* stream) {
  if (p.rows <= kRouterReduceLaunchRows) {
    router_gemv_logits_launch(p, b, stream);
  } else {
    router_gemv_launch(p, b, stream);
    router_reduce_launch(p, b, stream);
  }
  router_gate_launch(p, b, stream);
}

}  // namespace fb
