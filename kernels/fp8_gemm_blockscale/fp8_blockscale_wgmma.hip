// The block-scale fp8 GEMM on the matrix units (wgmma, sm_90a), split-K: a persistent CTA (one per
// SM) computes units in turn, a unit being one 128 x 128 tile's slice (128 x 192 for the wide tile),
// with two consumer warpgroups of 64 rows fed by a TMA producer (wgmma_pipeline) that runs on into
// the next unit while this one waits for its turn and adds into acc.
// For each 128-K block of its slice in order the matrix unit forms a warpgroup's partial (4 k32
// steps from zero), promoted on the CUDA cores: part = fma(partial, fl(a_s * b_s), part), a_s the
// 1x128 scale of the register's row and b_s the 128x128 scale of its column (one per 128-wide tile,
// two for the wide tile). Then the tile's turnstile adds the slice into acc in slice order.
// Deterministic (fixed instruction sequence, ordered slices); against the blocked emulation within
// the bound of kernels/fp8_gemm/fp8_gemm_bounds.hpp.
// The direct form (kDirect) writes C = bf16(+0 + part) from the registers and never touches acc:
// the acc form's C bit for bit, without the memset and acc's fp32 round trip (at 32768 x 2304 x
// 6144 the direct form moves 0.37 GB of DRAM bytes, the acc form 1.27 GB). With S > 1 slices a
// tile's slices run on the CTAs of one thread-block cluster and are added in shared memory in
// slice order (fp8_blockscale_cluster.hpp): again the acc form's C at that S.
// Until run 62 a CTA was one unit (grid N/128 x M/128 x S, the turnstile over all 384 threads).
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/thread_block_cluster.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_store.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster_arrivals.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_epoch.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_schedule.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_turnstile.hpp"

namespace fb {
namespace {

static_assert(kBlockscaleClusterMaxSlices <= kPortableClusterSize);

// The named barrier (1..15) of the two consumer warpgroups around the turnstile's adds.
constexpr int kTurnstileBarrier = 1;
constexpr int kConsumerThreads = kWgmmaConsumerGroups * kWgmmaThreads;

// The promotion of one block's partial: part[j] = fma(partial[j], scale, part[j]) with the scale of
// register j's row (lo or hi, [0] or [1]) and of its column's 128-column scale block. Register
// group j / 4 holds 8 columns: groups 0-7 lie in the tile's first scale block, 16-23 (the wide
// tile's last 64 columns) in its second, and 8-15 in the first where the tile starts a scale block
// (n0 % 128 == 0; every 128-wide tile) and in the second where it starts half-way (64), so the
// caller passes `middle` as one or the other: no branch, one copy of the 96 fmas (until run 70 a
// branch chose between two copies of the block).
template <int kAccRegs>
__device__ inline void blockscale_promote_block(float* part, const float* partial, const float (&first)[2],
                                                const float (&middle)[2], const float (&second)[2]) {
#pragma unroll
  for (int j = 0; j < kAccRegs; ++j) {
    const int group = j / 4, row = (j / 2) % 2;
    const float scale = group < 8 ? first[row] : group < 16 ? middle[row] : second[row];
    part[j] = blockscale_promote_scaled(part[j], partial[j], scale);
  }
}

#if FB_WGMMA_AVAILABLE
// Thread 0's arrivals on the mbarrier at `local` of each of the cluster's `slices` CTAs, releasing
// its CTA's earlier writes or reads (a CTA barrier before gathers them), in the launch's form
// (fp8_blockscale_cluster_arrivals.hpp): a release arrival each (a MEMBAR.GPU before each: run 76),
// or one release fence and relaxed arrivals.
__device__ inline void blockscale_cluster_arrive_all(std::uint32_t local, int slices, ClusterArrivals arrivals) {
  if (arrivals == ClusterArrivals::relaxed) {
    cluster_release_fence();
    for (int r = 0; r < slices; ++r) cluster_mbar_arrive_relaxed(cluster_peer_address(local, static_cast<unsigned>(r)));
  } else {
    for (int r = 0; r < slices; ++r) cluster_mbar_arrive(cluster_peer_address(local, static_cast<unsigned>(r)));
  }
}

// One unit's exchange in the direct form's split-K (the steps of fp8_blockscale_cluster.hpp), run
// by every consumer thread with its slice's sums `part`, in BlockscaleExchange<kTileN>::kRounds
// rounds of columns; `exchanges` counts the CTA's rounds so far (their parity is the barriers'
// phase), `m0`, `n0` the tile's corner. The two mbarriers follow the area.
template <int kTileN>
__device__ inline void blockscale_cluster_exchange(const float* part, float* area, int g_row, std::uint32_t& exchanges,
                                                   const Fp8BlockscaleParams& p, std::uint16_t* c, std::int64_t m0,
                                                   std::int64_t n0, ClusterArrivals arrivals) {
  using X = BlockscaleExchange<kTileN>;
  const int slices = static_cast<int>(p.slices);
  const std::uint32_t base = smem_address(area), ready = base + X::kAreaBytes, drained = ready + 8;
  const int valid_rows = static_cast<int>(p.rows - m0 < X::kRows ? p.rows - m0 : X::kRows);
  const ClusterShare share = blockscale_cluster_share(valid_rows * X::kGroupsPerRow, static_cast<int>(cluster_rank()), slices);
#pragma unroll
  for (int round = 0; round < X::kRounds; ++round) {
    const std::uint32_t parity = exchanges++ & 1u;
    // This round's registers: register group j / 4 holds columns 8 (j / 4) .. + 7.
#pragma unroll
    for (int j = 0; j < wgmma_acc_regs(kTileN); j += 2)
      if (j / 4 >= round * X::kCols / 8 && j / 4 < (round + 1) * X::kCols / 8)
        *reinterpret_cast<float2*>(area + X::offset(g_row + wgmma_acc_row(j), wgmma_acc_col(j) - round * X::kCols)) =
            make_float2(part[j], part[j + 1]);
    named_barrier_sync(kTurnstileBarrier, kConsumerThreads);  // every thread's stores, before thread 0's release
    if (threadIdx.x == 0) blockscale_cluster_arrive_all(ready, slices, arrivals);
    cluster_mbar_wait(ready, parity);
    for (int g = share.begin + static_cast<int>(threadIdx.x); g < share.end; g += kConsumerThreads) {
      const int row = g / X::kGroupsPerRow, col = 4 * (g % X::kGroupsPerRow);
      const std::uint32_t at = base + 4 * static_cast<std::uint32_t>(X::offset(row, col));
      // Four slices' loads at a time in flight together, then their adds in slice order, from +0.
      float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int r0 = 0; r0 < slices; r0 += 4) {
        float4 v[4];
#pragma unroll
        for (int r = 0; r < 4; ++r)
          if (r0 + r < slices) v[r] = cluster_load_float4(cluster_peer_address(at, static_cast<unsigned>(r0 + r)));
#pragma unroll
        for (int r = 0; r < 4; ++r)
          if (r0 + r < slices) sum = make_float4(sum.x + v[r].x, sum.y + v[r].y, sum.z + v[r].z, sum.w + v[r].w);
      }
      *reinterpret_cast<uint2*>(c + (m0 + row) * p.cols + n0 + round * X::kCols + col) =
          make_uint2(bf16x2_from_float(sum.x, sum.y), bf16x2_from_float(sum.z, sum.w));
    }
    named_barrier_sync(kTurnstileBarrier, kConsumerThreads);  // every thread's reads, before thread 0's release
    if (threadIdx.x == 0) blockscale_cluster_arrive_all(drained, slices, arrivals);
    cluster_mbar_wait(drained, parity);
  }
}
#endif

// The schedule (units, their order, what each waits on, why it always progresses):
// fp8_blockscale_schedule.hpp. kTileN: 128, or the wide tile's 192 (blockscale_tile_cols).
template <int kTileN, bool kDirect, bool kClustered = false>
__global__ __launch_bounds__(kWgmmaCtaThreads, 1) void fp8_blockscale_wgmma_kernel(Fp8BlockscaleParams p,
                                                                             Fp8BlockscaleBuffers b,
                                                                             std::uint32_t epoch,
                                                                             const FB_GRID_CONSTANT WgmmaOperands maps,
                                                                             const FB_GRID_CONSTANT WgmmaTensorMap c_map,
                                                                             bool staged, ClusterArrivals arrivals) {
#if FB_WGMMA_AVAILABLE
  extern __shared__ __align__(128) std::uint8_t smem[];
  const std::int64_t kb_count = p.k_blocks();
  constexpr int kAccRegs = wgmma_acc_regs(kTileN);
  constexpr bool kWide = kTileN > 128;
  const BlockscaleSchedule<std::int64_t> schedule = blockscale_schedule(p, kWgmmaCtaM, kTileN);
  const BlockscaleSchedule<int> schedule32 = schedule.narrow();  // the epilogue's (fewer registers)
  // The direct form's split-K: a cluster of S CTAs per tile (fp8_blockscale_cluster.hpp), its
  // exchange area and mbarriers past the pipeline's bytes.
  static_assert(!kClustered || kDirect, "the cluster exchange is the direct form's");
  std::uint32_t exchanges = 0;
  if constexpr (kClustered) {
    if (threadIdx.x == 0) {
      auto* bars = reinterpret_cast<std::uint64_t*>(smem + wgmma_pipeline_bytes(kTileN) +
                                                    BlockscaleExchange<kTileN>::kAreaBytes);
      mbar_init(&bars[0], static_cast<unsigned>(p.slices));  // ready: one arrival per CTA of the cluster
      mbar_init(&bars[1], static_cast<unsigned>(p.slices));  // drained: the same
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    cluster_sync_all();  // every CTA's barriers initialised before any arrives on them
  }
  const auto unit = [&](int i, WgmmaUnit& w) {
    // In 32 bits (the launcher keeps the units below 2^30): run 75's profile counted about 128
    // instructions a unit in this lambda's 64-bit divisions.
    const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
    const int u = kClustered ? schedule32.cluster_unit(cta, i, ctas) : schedule32.unit(cta, i, ctas);
    const int s = schedule32.slice(u), kb = static_cast<int>(kb_count);  // p.slice_begin's arithmetic
    w = WgmmaUnit{static_cast<std::int64_t>(schedule32.m_tile(u)) * kWgmmaCtaM,
                  static_cast<std::int64_t>(schedule32.n_block(u)) * kTileN, s * kb / schedule32.slices,
                  (s + 1) * kb / schedule32.slices};
    return u < schedule32.units();
  };
  // This consumer thread's unit number, the offsets of its two rows' scales (fragment rows r and
  // r + 8; -1 past M: scale 0) and of the tile's first scale block, its slice's partial sum, and
  // block kb's scales (the wide tile's second scale block's too), loaded during block kb's product
  // (after block kb - 1's promotion). 32-bit state: the 128-wide kernel uses 165 of the 168
  // registers a thread may have there.
  const int g_row = (wgmma_consumer_group() % kWgmmaConsumerGroups) * kWgmmaTileM;
  int u = static_cast<int>(blockIdx.x), a_lo = 0, a_hi = 0, b_at = 0;
  bool split_at_64 = false;  // a wide tile at n0 % 128 == 64: its second scale block from column 64
  float part[kAccRegs];
  float as_lo = 0.0f, as_hi = 0.0f, bs0 = 0.0f, bs1 = 0.0f;
  auto load_scales = [&](int kb) {
    as_lo = a_lo >= 0 ? b.a_scale[a_lo + kb] : 0.0f;
    as_hi = a_hi >= 0 ? b.a_scale[a_hi + kb] : 0.0f;
    bs0 = b.b_scale[b_at + kb];
    if constexpr (kWide) bs1 = b.b_scale[b_at + static_cast<int>(kb_count) + kb];
  };
  const auto start = [&](const WgmmaUnit& w) {
    const std::int64_t row_lo = w.m0 + g_row + wgmma_acc_row(0), row_hi = row_lo + 8;
    a_lo = row_lo < p.rows ? static_cast<int>(row_lo * kb_count) : -1;
    a_hi = row_hi < p.rows ? static_cast<int>(row_hi * kb_count) : -1;
    b_at = static_cast<int>((w.n0 / 128) * kb_count);
    split_at_64 = kWide && w.n0 % 128 != 0;
#pragma unroll
    for (int j = 0; j < kAccRegs; ++j) part[j] = 0.0f;
    if (w.kb_begin < w.kb_end) load_scales(static_cast<int>(w.kb_begin));
  };
  const auto promote = [&](std::int64_t kb, const float* partial) {
    // The scales' products once per row, scale block and K block, then one fma per element
    // (fp8_blockscale_math.hpp).
    const float first[2] = {blockscale_scale(as_lo, bs0), blockscale_scale(as_hi, bs0)};
    const float second[2] = {blockscale_scale(as_lo, bs1), blockscale_scale(as_hi, bs1)};
    const float middle[2] = {split_at_64 ? second[0] : first[0], split_at_64 ? second[1] : first[1]};
    blockscale_promote_block<kAccRegs>(part, partial, first, middle, second);
    // The next block's (within K even past the slice: no slice end to keep in a register).
    load_scales(static_cast<int>(kb + 1 < kb_count ? kb + 1 : kb));
  };
  // The turnstile over the two consumer warpgroups (the producer thread is meanwhile loading the
  // next unit's blocks): thread 0 waits for the slice's turn and a barrier releases the others;
  // each adds its registers into acc; a barrier collects their stores and thread 0 hands the turn
  // on. With one slice nobody waits, so neither barrier is needed.
  const auto finish = [&](const WgmmaUnit& w) {
    if constexpr (kDirect) {
      if constexpr (kClustered) {
        float* area = reinterpret_cast<float*>(smem + wgmma_pipeline_bytes(kTileN));
        blockscale_cluster_exchange<kTileN>(part, area, g_row, exchanges, p, b.c, w.m0, w.n0, arrivals);
        return;
      }
      // One slice (the launcher's check): C from the registers, staged through shared memory and
      // copied by the TMA (fp8_gemm_wgmma_store.hpp) where the C map fits, else one 4-byte store
      // per pair.
      const std::int64_t n0 = static_cast<std::int64_t>(schedule32.n_block(u)) * kTileN;
      const std::int64_t m0 = static_cast<std::int64_t>(schedule32.m_tile(u)) * kWgmmaCtaM + g_row;
      u += static_cast<int>(gridDim.x);
      if (staged) {
        if (m0 >= p.rows) return;  // the whole warpgroup: nothing of its tile lies in C
        const int g = wgmma_consumer_group();
        std::uint8_t* area = wgmma_store_area<kTileN>(smem + wgmma_pipeline_bytes(kTileN), g);
        wgmma_store_wait_area(g);
#pragma unroll
        for (int j = 0; j < kAccRegs; j += 2) wgmma_store_pair(area, j, blockscale_direct_c_pair(part[j], part[j + 1]));
        wgmma_store_issue<kTileN>(area, &c_map, m0, n0, g);
        return;
      }
      const std::int64_t row_lo = m0 + wgmma_acc_row(0);
#pragma unroll
      for (int j = 0; j < kAccRegs; j += 2) {
        const std::int64_t m = row_lo + 8 * ((j / 2) % 2), n = n0 + wgmma_acc_col(j);
        if (m < p.rows) *reinterpret_cast<std::uint32_t*>(b.c + m * p.cols + n) = blockscale_direct_c_pair(part[j], part[j + 1]);
      }
      return;
    }
    const int slice = schedule32.slice(u);
    std::uint32_t* ticket = b.tickets + schedule32.tile(u);
    const std::int64_t n0 = static_cast<std::int64_t>(schedule32.n_block(u)) * kTileN;
    const std::int64_t row_lo = static_cast<std::int64_t>(schedule32.m_tile(u)) * kWgmmaCtaM + g_row + wgmma_acc_row(0);
    const std::int64_t row_hi = row_lo + 8;
    const bool split = p.slices > 1, last = slice == p.slices - 1;
    if (split) {
      if (slice > 0 && threadIdx.x == 0) turnstile_spin(ticket, epoch, slice);
      named_barrier_sync(kTurnstileBarrier, kConsumerThreads);
    }
    // Registers j and j + 1 are adjacent columns of one row (N is a multiple of 128): one 8-byte
    // access to acc and one 4-byte store to C per pair. In each half of the registers every prior
    // sum is read before any is written, so the reads overlap (half at a time: all 64 at once
    // spilled registers). acc is read even with one slice: it holds the start (the F7 contract).
    const float* row_acc[2] = {b.acc + row_lo * p.cols + n0, b.acc + row_hi * p.cols + n0};
    constexpr int kHalf = kAccRegs / 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float2 prior[kHalf / 2];
#pragma unroll
      for (int j = h * kHalf; j < (h + 1) * kHalf; j += 2) {
        const int r = (j / 2) % 2;
        prior[(j - h * kHalf) / 2] = (r ? row_hi : row_lo) < p.rows
                                         ? turnstile_read_pair(row_acc[r], wgmma_acc_col(j))
                                         : make_float2(0.0f, 0.0f);
      }
#pragma unroll
      for (int j = h * kHalf; j < (h + 1) * kHalf; j += 2) {
        const std::int64_t m = (j / 2) % 2 ? row_hi : row_lo, n = n0 + wgmma_acc_col(j);
        if (m < p.rows)
          turnstile_write_pair(b.acc, b.c, m * p.cols + n, prior[(j - h * kHalf) / 2], part[j], part[j + 1], last);
      }
    }
    if (split) {
      named_barrier_sync(kTurnstileBarrier, kConsumerThreads);
      if (threadIdx.x == 0) turnstile_hand_on(ticket, epoch, slice);
    }
    u += static_cast<int>(gridDim.x);  // this CTA's next unit (BlockscaleSchedule::unit)
  };
  wgmma_pipeline<kTileN>(smem, maps, p.rows, unit, start, promote, finish);
  if (kDirect && staged) wgmma_store_drain();
#else
  (void)p;
  (void)b;
  (void)epoch;
  (void)maps;
  (void)c_map;
  (void)staged;
  (void)arrivals;
#endif
}

// The kernel's dynamic shared memory: the pipeline's, then the direct form's staging areas (S = 1)
// or the cluster's exchange (S > 1).
template <int kTileN, bool kDirect, bool kClustered = false>
constexpr int blockscale_wgmma_shared_bytes() {
  if constexpr (kClustered) return wgmma_pipeline_bytes(kTileN) + BlockscaleExchange<kTileN>::kSharedBytes;
  return wgmma_pipeline_bytes(kTileN) + (kDirect ? wgmma_store_bytes(kTileN) : 0);
}

}  // namespace

int fp8_blockscale_launch_tile_cols(const Fp8BlockscaleParams& p, bool direct) {
  return blockscale_launch_tile_cols(p, direct, device_multiprocessors());
}

std::string fp8_blockscale_wgmma_unavailable(const Fp8BlockscaleParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only";
  return wgmma_device_unavailable();
}

namespace {

template <int kTileN, bool kDirect>
void launch_tiles(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, std::int64_t units, hipStream_t stream) {
  constexpr int kBytes = blockscale_wgmma_shared_bytes<kTileN, kDirect>();
  wgmma_pipeline_allow_smem<fp8_blockscale_wgmma_kernel<kTileN, kDirect>, kBytes>();
  // Persistent, at most one CTA per SM: the turnstile's progress needs each to find an SM
  // (fp8_blockscale_schedule.hpp).
  // FB_BLOCKSCALE_CTA_PER_UNIT (experiment knob, build time) launches a CTA per unit instead, as
  // until run 62; its progress is then the plain kernel's (slice-major, in-order dispatch).
#if defined(FB_BLOCKSCALE_CTA_PER_UNIT)
  const auto grid = static_cast<unsigned>(units);
#else
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(units, device_multiprocessors()));
#endif
  const WgmmaOperands maps = wgmma_operands(b.a, p.rows, b.b, p.cols, p.depth, kTileN);
  const bool staged = kDirect && wgmma_launch_epilogue_staged(p.cols) && wgmma_output_map_fits(b.c, p.cols);
  const WgmmaTensorMap c_map = staged ? wgmma_output_map(b.c, p.rows, p.cols) : WgmmaTensorMap{};
  fp8_blockscale_wgmma_kernel<kTileN, kDirect>
      <<<grid, kWgmmaCtaThreads, kBytes, stream>>>(p, b, next_blockscale_epoch(), maps, c_map, staged,
                                                     ClusterArrivals::release);  // no cluster: unused
  gpu_check_launch("fp8_blockscale_wgmma_kernel");
}

// The direct form's split-K: clusters of S CTAs, as many as the tiles or as fit on the device at
// once (a cluster waits on nobody outside it, so any number finishes).
template <int kTileN>
void launch_clusters(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, std::int64_t tiles,
                     hipStream_t stream) {
  constexpr int kBytes = blockscale_wgmma_shared_bytes<kTileN, true, true>();
  static_assert(kBytes <= 227 * 1024, "a CTA may use at most 227 KB of shared memory");
  wgmma_pipeline_allow_smem<fp8_blockscale_wgmma_kernel<kTileN, true, true>, kBytes>();
  const int size = static_cast<int>(p.slices);
  const int fit = max_active_clusters(fp8_blockscale_wgmma_kernel<kTileN, true, true>, kWgmmaCtaThreads, kBytes, size);
  if (fit < 1)
    throw DeviceError("fp8_blockscale_wgmma_direct: no cluster of " + std::to_string(size) +
                      " CTAs of this kernel fits the device");
  const auto clusters = static_cast<unsigned>(std::min<std::int64_t>(tiles, fit));
  const WgmmaOperands maps = wgmma_operands(b.a, p.rows, b.b, p.cols, p.depth, kTileN);
  launch_in_clusters("fp8_blockscale_wgmma_kernel (clusters)", fp8_blockscale_wgmma_kernel<kTileN, true, true>,
                     clusters * static_cast<unsigned>(size), kWgmmaCtaThreads, kBytes, size, stream, p, b,
                     next_blockscale_epoch(), maps, WgmmaTensorMap{}, false, launch_cluster_arrivals());
}

template <bool kDirect>
void launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream, const char* name) {
  if (const std::string why = fp8_blockscale_wgmma_unavailable(p); !why.empty())
    throw DeviceError(std::string(name) + ": " + why);
  if (kDirect && p.slices > kBlockscaleClusterMaxSlices)
    throw InputError(std::string(name) + ": the direct form adds at most " + std::to_string(kBlockscaleClusterMaxSlices) +
                     " slices in a cluster (S=" + std::to_string(p.slices) + ")");
  if (p.rows == 0) return;
  const int tile_cols = fp8_blockscale_launch_tile_cols(p, kDirect);
  const std::int64_t units = blockscale_schedule(p, kWgmmaCtaM, tile_cols).units();
  if (p.rows * p.k_blocks() > INT32_MAX || units > INT32_MAX / 2 || p.k_blocks() * (p.slices + 1) > INT32_MAX)
    throw InputError(std::string(name) + ": more than 2^31 row scales or 2^30 units (" + std::to_string(p.rows) +
                     " rows)");
  const auto s = static_cast<hipStream_t>(stream);
  if (kDirect && p.slices > 1 && tile_cols == kBlockscaleWideTileCols)
    launch_clusters<kBlockscaleWideTileCols>(p, b, units / p.slices, s);
  else if (kDirect && p.slices > 1)
    launch_clusters<128>(p, b, units / p.slices, s);
  else if (tile_cols == kBlockscaleWideTileCols)
    launch_tiles<kBlockscaleWideTileCols, kDirect>(p, b, units, s);
  else
    launch_tiles<128, kDirect>(p, b, units, s);
}

}  // namespace

void fp8_blockscale_wgmma_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  launch<false>(p, b, stream, "fp8_blockscale_wgmma");
}

void fp8_blockscale_wgmma_direct_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  launch<true>(p, b, stream, "fp8_blockscale_wgmma_direct");
}

}  // namespace fb
