// All-reduce kernels, simulated and real ranks (the arithmetic: allreduce_math.hpp; the block
// mapping and the barrier: allreduce_device.hpp).
//
// One kernel template per variant, run phase by phase: simulated ranks launch phase k of every
// rank, then phase k + 1 (the stream order is the barrier); a real rank runs all its phases in one
// launch with a barrier where a phase reads what peers wrote, and one at the end so no peer reuses
// its buffers while another still reads them.
//   one_shot       [barrier] reduce all elements                                     [barrier]
//   two_shot       [barrier] reduce slice r  [barrier] copy the other slices          [barrier]
//   two_shot_q     quantize own groups  [barrier] reduce + requantize slice r  [barrier] gather [barrier]
#include "kernels/allreduce/allreduce_device.hpp"
#include "kernels/common/gpu_check.hpp"

namespace fb {
namespace {

template <bool kVec>
struct OneShot {
  static constexpr int kPhases = 1;
  __device__ static bool barrier_before(int) { return true; }
  __device__ static void phase(const AllreduceParams& p, const AllreduceRankView& v, int) {
    allreduce_reduce_range<kVec>(p, v, 0, p.elements());
  }
};

template <bool kVec>
struct TwoShot {
  static constexpr int kPhases = 2;
  __device__ static bool barrier_before(int) { return true; }
  __device__ static void phase(const AllreduceParams& p, const AllreduceRankView& v, int ph) {
    if (ph == 0) {
      allreduce_reduce_range<kVec>(p, v, p.slice_begin(v.rank), p.slice_end(v.rank));
      return;
    }
    for (int s = 0; s < p.ranks; ++s)
      if (s != v.rank) allreduce_copy_range<kVec>(v, s, p.slice_begin(s), p.slice_end(s));
  }
};

template <class Wire>
struct TwoShotQuantized {
  static constexpr int kPhases = 3;
  // Phase 0 reads this rank's input only.
  __device__ static bool barrier_before(int ph) { return ph > 0; }
  __device__ static void phase(const AllreduceParams& p, const AllreduceRankView& v, int ph) {
    if (ph == 0) {
      for (int s = 0; s < p.ranks; ++s)
        allreduce_for_slice_groups(p, s, [&](std::int64_t g) { allreduce_quantize_input<Wire>(p, v, g); });
    } else if (ph == 1) {
      allreduce_for_slice_groups(p, v.rank, [&](std::int64_t g) { allreduce_reduce_group<Wire>(p, v, g); });
    } else {
      for (int s = 0; s < p.ranks; ++s)
        allreduce_for_slice_groups(p, s, [&](std::int64_t g) { allreduce_gather_group<Wire>(p, v, s, g); });
    }
  }
};

// Simulated ranks: one phase of one rank.
template <class Op>
__global__ __launch_bounds__(kAllreduceThreads) void allreduce_phase_kernel(AllreduceParams p, AllreduceRankView v,
                                                                            int ph) {
  Op::phase(p, v, ph);
}

// Real ranks: every phase, with the barriers.
template <class Op>
__global__ __launch_bounds__(kAllreduceThreads) void allreduce_rank_kernel(AllreduceParams p, AllreduceRankView v,
                                                                           AllreduceBarrierArgs bar) {
  for (int ph = 0; ph < Op::kPhases; ++ph) {
    if (Op::barrier_before(ph)) allreduce_barrier(bar, v.rank, p.ranks);
    Op::phase(p, v, ph);
  }
  allreduce_barrier(bar, v.rank, p.ranks);
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

// The 16-byte paths need every rank's buffers aligned and whole vectors (slices are whole groups of 32).
bool vector_path(const AllreduceParams& p, const AllreduceRankView& v) {
  if (p.elements() % 8 != 0) return false;
  for (int r = 0; r < p.ranks; ++r)
    if (!aligned16(v.x[r]) || !aligned16(v.out[r])) return false;
  return true;
}

// Calls fn.template operator()<Op>() with the kernel class of the variant.
template <class Fn>
void with_op(const AllreduceParams& p, bool vec, Fn&& fn) {
  switch (p.variant) {
    case AllreduceVariant::one_shot:
      if (vec) return fn(OneShot<true>{});
      return fn(OneShot<false>{});
    case AllreduceVariant::two_shot:
      if (vec) return fn(TwoShot<true>{});
      return fn(TwoShot<false>{});
    case AllreduceVariant::two_shot_fp8: return fn(TwoShotQuantized<AllreduceFp8Wire>{});
    case AllreduceVariant::two_shot_int4: return fn(TwoShotQuantized<AllreduceInt4Wire>{});
    case AllreduceVariant::vendor: break;
  }
  throw DeviceError("allreduce: the vendor variant has no kernel of ours");
}

// Blocks that cover the largest phase of a simulated rank (grid-stride beyond).
unsigned sim_blocks(const AllreduceParams& p, bool vec) {
  const std::int64_t units = allreduce_quantized(p.variant) ? p.groups() : (vec ? p.elements() / 8 : p.elements());
  const std::int64_t blocks = (units + kAllreduceThreads - 1) / kAllreduceThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

}  // namespace

void allreduce_sim_launch(const AllreduceParams& p, const AllreduceSimBuffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const bool vec = vector_path(p, allreduce_sim_view(p, b, 0));
  with_op(p, vec, [&](auto op) {
    using Op = decltype(op);
    for (int ph = 0; ph < Op::kPhases; ++ph)
      for (int r = 0; r < p.ranks; ++r)
        allreduce_phase_kernel<Op><<<sim_blocks(p, vec), kAllreduceThreads, 0, s>>>(p, allreduce_sim_view(p, b, r), ph);
  });
  gpu_check_launch("allreduce_phase_kernel");
}

void allreduce_rank_launch(const AllreduceParams& p, const AllreduceRankView& view, const AllreduceBarrierArgs& barrier,
                           int blocks, void* stream) {
  if (blocks < 1 || blocks > kAllreduceMaxBlocks) throw DeviceError("allreduce_rank_launch: blocks out of range");
  with_op(p, vector_path(p, view), [&](auto op) {
    using Op = decltype(op);
    allreduce_rank_kernel<Op>
        <<<static_cast<unsigned>(blocks), kAllreduceThreads, 0, static_cast<hipStream_t>(stream)>>>(p, view, barrier);
  });
  gpu_check_launch("allreduce_rank_kernel");
}

}  // namespace fb
