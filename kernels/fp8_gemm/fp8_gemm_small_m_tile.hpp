// F8's row tile (fp8_gemm_small_m_device.hpp's block body takes R rows): the rule the launcher
// follows and the text a report names it by (CaseInstance::launch_config). Host and device, no HIP:
// the launcher and the case call the same functions, so a report names the tile that ran.
#pragma once

#include <cstdint>
#include <string>

namespace fb {

// Rows per block (the row tile). A block streams its columns' weight rows once per row tile: M
// rows in tiles of R take ceil(M / R) passes over the weight (the later ones mostly from L2) and
// ceil(M / R) times the blocks. Measured (run 38, graph replay, us at M = 3 / 8 / 16): R = 1:
// 12.8 / 24.8 / 46.2; 2: 13.4 / 20.7 / 38.7; 4: 12.0 / 23.1 / 34.8; 8: 19.0 / 19.4 / 37.8; 16:
// 34.8 / 35.3 / 36.1; one tile of M itself (3 rows: run 36) 9.4 at M = 3. So the auto rule keeps
// one tile of M rows (1, 2, 3 or 4 exactly, then 8, then 16); an explicit tile (the small_m
// case's `row_tile` axis: 1, 2, 4, 8 or 16) wins.
constexpr int fp8_gemm_small_m_auto_tile(std::int64_t rows) {
  return rows <= 4 ? static_cast<int>(rows < 1 ? 1 : rows) : rows <= 8 ? 8 : 16;
}

constexpr int fp8_gemm_small_m_row_tile(std::int64_t rows, std::int64_t explicit_tile = 0) {
  const std::int64_t t = explicit_tile > 0 ? explicit_tile : fp8_gemm_small_m_auto_tile(rows);
  return t <= 4 ? static_cast<int>(t) : t <= 8 ? 8 : 16;
}

// How a report names the tile: "row tile 3" (rows per block).
inline std::string fp8_gemm_small_m_tile_text(std::int64_t rows, std::int64_t explicit_tile = 0) {
  return "row tile " + std::to_string(fp8_gemm_small_m_row_tile(rows, explicit_tile));
}

}  // namespace fb
