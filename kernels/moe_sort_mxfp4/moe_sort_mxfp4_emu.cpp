// CPU emulation of F5's fused paths and chain, with the kernels' arithmetic
// (moe_sort_mxfp4_math.hpp) and the same writes:
//   chain        count -> scan -> scatter (+ moe_buf zero) -> quant rows (per-row scales)
//                -> scale sort (sorted ids + per-row scales -> swizzled bytes)
//   one launch   bitmap sort; each row quantized once, its scales stored at its sorted positions
//   four launch  count + quant rows (per-row scales) + moe_buf zero -> scan -> scatter
//                -> word-wise gather (per-row scales -> swizzled words, by (row pair, 8-column group))
// A 32-element block's scale is a function of its 32 inputs only, so where the scale is computed
// (per row, then moved; or at the sorted position directly) cannot change a bit.
#include <cstring>
#include <vector>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_sort_emu.hpp"

namespace fb {
namespace {

// Below this many elements a loop runs on one thread: waking threads costs more than the work.
constexpr std::int64_t kParallelWork = 1 << 16;

// Quantizes row r: K/2 bytes of xq and K/32 scale bytes into row_scale.
void quant_row(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, std::int64_t r, std::uint8_t* row_scale) {
  const std::uint16_t* x = b.x + r * p.cols;
  std::uint8_t* q = b.xq + r * p.cols / 2;
  for (std::int64_t y = 0; y < p.scale_cols(); ++y) {
    std::uint32_t w[16];  // 32 bf16, element 2i in the low half of word i
    std::memcpy(w, x + y * kMxBlock, sizeof w);
    std::uint32_t amax = 0;
    for (std::uint32_t word : w) amax = max_u32(amax, bf16x2_abs_max_bits(word));
    const std::uint8_t s = mx_scale_byte(amax, p.rule);
    const float inverse = e8m0_inverse(s);
    for (int v = 0; v < 4; ++v) {
      const std::uint32_t packed =
          mx_quantize_bf16x8(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3], inverse, p.rounding);
      std::memcpy(q + y * 16 + v * 4, &packed, 4);
    }
    row_scale[y] = s;
  }
}

// A row's scale bytes at each sorted position that reads it, pad columns as 0.
void store_row_scales(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, const std::int32_t* positions,
                      std::int64_t count, const std::uint8_t* row_scale) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (positions[i] < 0) continue;
    for (std::int64_t y = 0; y < p.scale_cols_pad(); ++y)
      b.scales[mx_scale_addr(positions[i], y, p.scale_cols_pad())] = y < p.scale_cols() ? row_scale[y] : 0;
  }
}

// Every row quantized once; its scales go to the positions of its pairs (row r owns pairs
// [r * slots, (r + 1) * slots): the token's k pairs at stage 1, pair r itself at stage 2).
void quant_rows_to_sorted(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, const std::int32_t* pair_pos) {
  const std::int64_t slots = p.slots_per_row();
#pragma omp parallel if (p.rows() * p.cols >= kParallelWork)
  {
    std::vector<std::uint8_t> row_scale(static_cast<std::size_t>(p.scale_cols()));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < p.rows(); ++r) {
      quant_row(p, b, r, row_scale.data());
      store_row_scales(p, b, pair_pos + r * slots, slots, row_scale.data());
    }
  }
}

}  // namespace

void mxfp4_quant_rows_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
#pragma omp parallel for schedule(static) if (p.rows() * p.cols >= kParallelWork)
  for (std::int64_t r = 0; r < p.rows(); ++r) quant_row(p, b, r, b.row_scales + r * p.scale_cols());
}

void mxfp4_scale_sort_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::int64_t valid = b.num_valid_ids[0], pad = p.scale_cols_pad();
  const std::int64_t bytes = (valid + 31) / 32 * 32 * pad;  // the written tiles
#pragma omp parallel for schedule(static) if (bytes >= kParallelWork)
  for (std::int64_t a = 0; a < bytes; ++a) {
    const MxScaleCoord c = mx_scale_coord(a, pad);
    std::uint8_t v = 0;  // sentinels, pad columns, rows past num_valid_ids[0]
    if (c.p < valid && c.y < p.scale_cols()) {
      const std::int32_t entry = b.sorted_token_ids[c.p];
      if (moe_entry_token(entry) < p.tokens)
        v = b.row_scales[mx_source_row(entry, p.topk, p.stage) * p.scale_cols() + c.y];
    }
    b.scales[a] = v;
  }
}

void mxfp4_scale_gather_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::int64_t valid = b.num_valid_ids[0], groups = p.scale_cols_pad() / 8;
  const std::int64_t slots = (valid + 31) / 32 * groups;  // 256-byte slots of the written tiles
  const auto group_of = [&](std::int64_t pos, std::int64_t group) -> std::uint64_t {
    if (pos >= valid) return 0;
    const std::int32_t entry = b.sorted_token_ids[pos];
    if (moe_entry_token(entry) >= p.tokens) return 0;  // sentinel
    return mx_row_scale_group(b.row_scales + mx_source_row(entry, p.topk, p.stage) * p.scale_cols(), p.scale_cols(),
                              group);
  };
#pragma omp parallel for schedule(static) if (slots * 256 >= kParallelWork)
  for (std::int64_t q = 0; q < slots; ++q) {
    const std::int64_t tile = q / groups, group = q % groups;
    for (std::int64_t i = 0; i < 16; ++i) {
      const std::uint64_t lo = group_of(tile * 32 + i, group), hi = group_of(tile * 32 + i + 16, group);
      for (int c = 0; c < 4; ++c) {
        const std::uint32_t word = mx_scale_word(lo, hi, c);
        std::memcpy(b.scales + q * 256 + c * 64 + i * 4, &word, 4);  // little-endian, as on the device
      }
    }
  }
}

void moe_sort_quant_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::vector<std::int32_t> pair_pos = moe_sort_one_launch_emu(p, b);
  quant_rows_to_sorted(p, b, pair_pos.data());
  moe_buf_zero_emu(p, b);
}

void moe_sort_quant_large_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  moe_sort_count_emu(p, b);  // launch 1: three block families, independent outputs
  mxfp4_quant_rows_emu(p, b);
  moe_buf_zero_emu(p, b);
  moe_sort_scan_emu(p, b);
  moe_sort_scatter_emu(p, b, false);
  mxfp4_scale_gather_emu(p, b);
}

void moe_sort_mxfp4_chain_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  moe_sort_count_emu(p, b);
  moe_sort_scan_emu(p, b);
  moe_sort_scatter_emu(p, b, true);
  mxfp4_quant_rows_emu(p, b);
  mxfp4_scale_sort_emu(p, b);
}

void moe_sort_mxfp4_fused_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  switch (moe_sort_quant_path(p)) {
    case MoeSortQuantPath::one_launch: moe_sort_quant_emu(p, b); return;
    case MoeSortQuantPath::four_launch: moe_sort_quant_large_emu(p, b); return;
    case MoeSortQuantPath::chain: moe_sort_mxfp4_chain_emu(p, b); return;
  }
}

}  // namespace fb
