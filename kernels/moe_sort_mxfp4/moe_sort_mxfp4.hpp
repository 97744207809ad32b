// MoE sort + MXFP4 activation quant with sorted, swizzled scales (F5).
//
// Inputs: topk_ids [T][k] int32, topk_weights [T][k] fp32, the activation rows x [rows][K] bf16
// (stage 1: rows = T, row = token; stage 2: rows = T*k, row = token*k + slot) and an optional
// expert mask [E]. Outputs: the MoE sort (sorted_token_ids, sorted_weights, sorted_expert_ids,
// num_valid_ids, zeroed moe_buf [T][D]), the e2m1 rows in their original order and the e8m0 scales
// at sorted positions in the swizzled layout addr(p, y).
//
// Params (settings) and Buffers (pointers) for the fused kernels, the chain and their CPU
// emulation. No HIP, no Eigen. Numeric contract: docs/numeric-contract.md#moe-sort and
// docs/numeric-contract.md#mxfp4-activation-quant.
#pragma once

#include <cstdint>

#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"

namespace fb {

enum class MoeStage : std::uint8_t { stage1, stage2 };

// Which implementation the fused role runs (moe_sort_quant_path): one launch up to 1024 tokens,
// four launches above, and the chain again where 32-bit element offsets would overflow.
enum class MoeSortQuantPath : std::uint8_t { one_launch, four_launch, chain };
const char* moe_sort_quant_path_name(MoeSortQuantPath path);

inline constexpr std::int64_t kMxBlock = 32;                 // elements per e8m0 scale, along K
inline constexpr std::int64_t kOneLaunchMaxTokens = 1024;    // moe_sort_quant up to here
inline constexpr std::int64_t kOneLaunchSmemBytes = 48 * 1024;  // its sort table must fit (no opt-in)
inline constexpr std::int64_t kSortChunkTokens = 256;        // tokens per block in the multi-phase sort
inline constexpr std::int64_t kPositionCache = 1024;         // sorted positions a quant tile caches
inline constexpr std::int64_t kOffsetLimit = std::int64_t{1} << 31;  // 32-bit element offsets

struct MoeSortMxfp4Params {
  std::int64_t tokens = 0;    // T
  std::int64_t topk = 0;      // k
  std::int64_t experts = 0;   // E (global count; the mask picks the local ones)
  std::int64_t block = 32;    // B, the M tile of the following GEMM
  std::int64_t cols = 0;      // K, columns of the quantized rows (a multiple of 32)
  std::int64_t buf_cols = 0;  // D, the row width of moe_buf
  MoeStage stage = MoeStage::stage1;
  bool masked = false;        // expert_mask given
  MxScaleRule rule = MxScaleRule::roundup;
  Fp4Rounding rounding = Fp4Rounding::rne;
  // The fused kernels index x, xq and moe_buf with 32-bit element offsets; where an index would
  // reach this limit the fused role runs the chain. Tests lower it to reach the fallback on a CPU.
  std::int64_t offset_limit = kOffsetLimit;

  std::int64_t rows() const { return stage == MoeStage::stage1 ? tokens : tokens * topk; }
  std::int64_t slots_per_row() const { return stage == MoeStage::stage1 ? topk : 1; }
  std::int64_t pairs() const { return tokens * topk; }
  std::int64_t scale_cols() const { return cols / kMxBlock; }
  std::int64_t scale_cols_pad() const { return (scale_cols() + 7) / 8 * 8; }
  // Buffer bound of the sort (docs/numeric-contract.md#moe-sort): T*k + E*B - k entries.
  std::int64_t max_entries() const { return tokens * topk + experts * block - topk; }
  std::int64_t max_blocks() const { return (max_entries() + block - 1) / block; }
  std::int64_t scale_rows() const { return (max_entries() + 31) / 32 * 32; }
  std::int64_t chunks() const { return (tokens + kSortChunkTokens - 1) / kSortChunkTokens; }
  // Rows per quant tile of the one-launch kernel: about 32 KiB of x, at most kPositionCache sorted positions.
  std::int64_t tile_rows() const;
  std::int64_t tiles() const { return (rows() + tile_rows() - 1) / tile_rows(); }
  std::int64_t one_launch_smem_bytes() const;
};

// Expert table written by the multi-phase scan (int32 words): start, count and local id of each
// expert, the exclusive prefix of their padding counts (E + 1 entries) and num_valid_ids[0].
struct MoeExpertInfoLayout {
  std::int64_t experts;
  FB_HD std::int64_t start() const { return 0; }
  FB_HD std::int64_t count() const { return experts; }
  FB_HD std::int64_t local() const { return 2 * experts; }
  FB_HD std::int64_t pad_start() const { return 3 * experts; }
  FB_HD std::int64_t valid() const { return 4 * experts + 1; }
  FB_HD std::int64_t words() const { return 4 * experts + 2; }
};

struct MoeSortMxfp4Buffers {
  const std::int32_t* topk_ids = nullptr;      // [T][k]
  const float* topk_weights = nullptr;         // [T][k]
  const std::uint16_t* x = nullptr;            // bf16 [rows][K]
  const std::int32_t* expert_mask = nullptr;   // [E], nonzero = local; null when not masked
  std::int32_t* sorted_token_ids = nullptr;    // [max_entries]
  float* sorted_weights = nullptr;             // [max_entries]
  std::int32_t* sorted_expert_ids = nullptr;   // [max_blocks]
  std::int32_t* num_valid_ids = nullptr;       // [2]
  std::uint16_t* moe_buf = nullptr;            // bf16 [T][D], zeroed
  std::uint8_t* xq = nullptr;                  // e2m1x2 [rows][K/2]
  std::uint8_t* scales = nullptr;              // e8m0 [scale_rows][scale_cols_pad], swizzled
  // Workspace (MoeSortMxfp4Instance::workspace) of the chain and the four-launch path: the
  // multi-phase sort tables and the per-row scales.
  std::int32_t* chunk_counts = nullptr;        // [chunks][E]: counts, then exclusive offsets
  std::int32_t* expert_info = nullptr;         // MoeExpertInfoLayout
  std::uint8_t* row_scales = nullptr;          // [rows][K/32]
};

// The fused role's implementation for these params (the dispatcher of
// docs/numeric-contract.md#mxfp4-activation-quant).
MoeSortQuantPath moe_sort_quant_path(const MoeSortMxfp4Params& p);

// Host-side validation (InputError with the reason): k >= 256, T >= 2^24 and a sort buffer of 2^31
// entries or more are impossible shapes; ids outside [0, E) and an expert twice in one row are bad
// input, never silently corrupted.
void moe_sort_validate_shape(const MoeSortMxfp4Params& p);
void moe_sort_validate_ids(const MoeSortMxfp4Params& p, const std::int32_t* topk_ids);

// CPU emulation (the kernels' algorithms and arithmetic). The fused emulation takes the same path
// as the fused launcher.
void moe_sort_mxfp4_fused_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void moe_sort_mxfp4_chain_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
// Pieces, in launch order.
void moe_sort_count_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void moe_sort_scan_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void moe_sort_scatter_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, bool zero_moe_buf);
void mxfp4_quant_rows_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void mxfp4_scale_sort_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void mxfp4_scale_gather_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void moe_sort_quant_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);
void moe_sort_quant_large_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);

// GPU launchers (kernels/moe_sort_mxfp4/*.hip); they throw DeviceError on a launch failure.
void moe_sort_mxfp4_fused_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_mxfp4_chain_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_count_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_scan_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_scatter_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, bool zero_moe_buf,
                             void* stream);
void mxfp4_quant_rows_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void mxfp4_scale_sort_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_quant_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);
void moe_sort_quant_large_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream);

}  // namespace fb
