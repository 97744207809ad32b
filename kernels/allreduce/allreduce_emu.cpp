// CPU emulation of the simulated ranks: each rank's program, phase by phase in the order the GPU
// stream runs them (every rank's phase k before any rank's phase k + 1), with the kernels' own
// arithmetic (allreduce_math.hpp).
#include <stdexcept>

#include "kernels/allreduce/allreduce.hpp"
#include "kernels/allreduce/allreduce_math.hpp"

namespace fb {
namespace {

constexpr std::int64_t kParallelElements = 1 << 16;

void one_shot(const AllreduceParams& p, const AllreduceSimBuffers& b) {
  for (int r = 0; r < p.ranks; ++r) {
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
    std::uint16_t* out = v.out[r];
#pragma omp parallel for schedule(static) if (p.elements() >= kParallelElements)
    for (std::int64_t i = 0; i < p.elements(); ++i) out[i] = bf16_from_float(allreduce_rank_sum(v, p.ranks, i));
  }
}

void two_shot(const AllreduceParams& p, const AllreduceSimBuffers& b) {
  for (int r = 0; r < p.ranks; ++r) {  // reduce-scatter: rank r reduces its slice into its output
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
    for (std::int64_t i = p.slice_begin(r); i < p.slice_end(r); ++i)
      v.out[r][i] = bf16_from_float(allreduce_rank_sum(v, p.ranks, i));
  }
  for (int r = 0; r < p.ranks; ++r) {  // all-gather: rank r copies every other slice from its owner
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
    for (int s = 0; s < p.ranks; ++s)
      if (s != r)
        for (std::int64_t i = p.slice_begin(s); i < p.slice_end(s); ++i) v.out[r][i] = v.out[s][i];
  }
}

template <class Wire>
void two_shot_quantized(const AllreduceParams& p, const AllreduceSimBuffers& b) {
  for (int r = 0; r < p.ranks; ++r) {
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
#pragma omp parallel for schedule(static) if (p.elements() >= kParallelElements)
    for (std::int64_t g = 0; g < p.groups(); ++g) allreduce_quantize_input<Wire>(p, v, g);
  }
  for (int r = 0; r < p.ranks; ++r) {
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
    const std::int64_t g0 = p.slice_begin(r) / kAllreduceGroup;
    const std::int64_t g1 = (p.slice_end(r) + kAllreduceGroup - 1) / kAllreduceGroup;
    for (std::int64_t g = g0; g < g1; ++g) allreduce_reduce_group<Wire>(p, v, g);
  }
  for (int r = 0; r < p.ranks; ++r) {
    const AllreduceRankView v = allreduce_sim_view(p, b, r);
    for (int s = 0; s < p.ranks; ++s) {
      const std::int64_t g0 = p.slice_begin(s) / kAllreduceGroup;
      const std::int64_t g1 = (p.slice_end(s) + kAllreduceGroup - 1) / kAllreduceGroup;
      for (std::int64_t g = g0; g < g1; ++g) allreduce_gather_group<Wire>(p, v, s, g);
    }
  }
}

}  // namespace

const char* allreduce_variant_name(AllreduceVariant v) {
  switch (v) {
    case AllreduceVariant::one_shot: return "one_shot";
    case AllreduceVariant::two_shot: return "two_shot";
    case AllreduceVariant::two_shot_fp8: return "two_shot_fp8";
    case AllreduceVariant::two_shot_int4: return "two_shot_int4";
    case AllreduceVariant::vendor: return "vendor";
  }
  return "?";
}

AllreduceRankView allreduce_sim_view(const AllreduceParams& p, const AllreduceSimBuffers& b, int rank) {
  AllreduceRankView v;
  v.rank = rank;
  const std::int64_t n = p.elements(), wb = p.wire_bytes(), g = p.groups();
  for (int r = 0; r < p.ranks; ++r) {
    v.x[r] = b.x + r * n;
    v.out[r] = b.out + r * n;
    if (b.wire) v.wire[r] = b.wire + r * wb;
    if (b.wire_scales) v.wire_scales[r] = b.wire_scales + r * g;
    if (b.gather) v.gather[r] = b.gather + r * wb;
    if (b.gather_scales) v.gather_scales[r] = b.gather_scales + r * g;
  }
  return v;
}

int allreduce_sim_launches(const AllreduceParams& p) {
  switch (p.variant) {
    case AllreduceVariant::one_shot: return p.ranks;
    case AllreduceVariant::two_shot: return 2 * p.ranks;
    case AllreduceVariant::two_shot_fp8:
    case AllreduceVariant::two_shot_int4: return 3 * p.ranks;
    case AllreduceVariant::vendor: return 1;
  }
  return 1;
}

void allreduce_emu(const AllreduceParams& p, const AllreduceSimBuffers& b) {
  switch (p.variant) {
    case AllreduceVariant::one_shot: return one_shot(p, b);
    case AllreduceVariant::two_shot: return two_shot(p, b);
    case AllreduceVariant::two_shot_fp8: return two_shot_quantized<AllreduceFp8Wire>(p, b);
    case AllreduceVariant::two_shot_int4: return two_shot_quantized<AllreduceInt4Wire>(p, b);
    case AllreduceVariant::vendor: break;
  }
  throw std::logic_error("allreduce: the vendor variant has no CPU emulation");
}

}  // namespace fb
