// The tile width of the wgmma GEMMs (the general GEMM's and the block-scale GEMM's CTA covers 128
// or 192 columns of C, wgmma_pipeline<kTileN>): what a caller may ask for, and the knob that asks.
// Each kernel decides where its wide tile applies and what it runs by default
// (fp8_gemm_wgmma_tile_cols below; blockscale_tile_cols in fp8_blockscale_schedule.hpp).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/knob_choice.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"

namespace fb {

inline constexpr int kWgmmaWideTileN = 192;

enum class TileWidthAsk { by_default, narrow, wide };

// Reads a tile-width knob (an environment variable, read per launch, for experiments and A/B runs):
// unset or empty asks for the kernel's default, "128" for the 128-wide tile, "192" for the wide
// one wherever the kernel allows it; any other value is an InputError naming the variable.
inline TileWidthAsk tile_width_asked(const char* variable) {
  const std::string v = knob_choice(variable, std::getenv(variable), "128", "192");
  if (v.empty()) return TileWidthAsk::by_default;
  return v == "192" ? TileWidthAsk::wide : TileWidthAsk::narrow;
}

// How a report names the CTA tile a wgmma kernel launches (CaseInstance::launch_config):
// "tile 128x192", C rows x columns.
inline std::string wgmma_tile_text(int tile_cols) {
  return "tile " + std::to_string(kWgmmaCtaM) + "x" + std::to_string(tile_cols);
}

// The general (per-token x per-channel) GEMM's knob (FUSEBENCH_GEMM_TILE_N) and width: 192 where
// N is a multiple of 192 (every m31 N: 1536, 6144; no tile is partial along N) and either asked for
// or, by default, M >= 4096; 128 otherwise. Run 69 (H100, both widths in one call): at 32768 rows
// 1.13x faster at 1536 x 6144 (1100 TFLOP/s) and 1.04x at 6144 x 768; at 1024 rows 1.21x slower at
// 1536 x 6144 (64 units instead of 96 for 132 SMs), level at 6144 x 768. Between 1024 and 32768
// rows this kernel was not measured; 4096 is where the block-scale GEMM's wide tile, on the same
// pipeline, was measured to win (fp8_blockscale_schedule.hpp).
inline constexpr const char* kGemmTileWidthVariable = "FUSEBENCH_GEMM_TILE_N";
inline constexpr std::int64_t kGemmWideMinRows = 4096;
inline int fp8_gemm_wgmma_tile_cols(std::int64_t rows, std::int64_t cols, TileWidthAsk ask) {
  if (cols % kWgmmaWideTileN != 0 || ask == TileWidthAsk::narrow) return 128;
  return ask == TileWidthAsk::wide || rows >= kGemmWideMinRows ? kWgmmaWideTileN : 128;
}
// The width fp8_gemm_wgmma_launch takes: the knob's, else the rule. The case reports the same call
// (launch_configs), so a report names what ran.
inline int fp8_gemm_launch_tile_cols(std::int64_t rows, std::int64_t cols) {
  return fp8_gemm_wgmma_tile_cols(rows, cols, tile_width_asked(kGemmTileWidthVariable));
}

}  // namespace fb
