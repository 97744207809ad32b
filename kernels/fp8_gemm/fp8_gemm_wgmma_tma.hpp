// The TMA descriptors (tensor maps) the wgmma pipeline's producer copies its tiles with: one per
// operand of a launch, encoded on the host and passed to the kernel as a __grid_constant__
// parameter. A map describes a row-major fp8 matrix of `rows` x `depth` bytes and a box of
// 128 K x the pipeline's rows (kWgmmaCtaM for A, the tile's width for B) in the 128-byte swizzle
// (fp8_gemm_wgmma_layout.hpp: the layout the wgmma descriptors read); rows past the end of the
// matrix arrive as zeros.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

#if defined(__HIPCC__)
namespace fb {
// AMD has no TMA; the type only keeps the kernels' signatures the same (they never run there).
struct alignas(64) WgmmaTensorMap {
  unsigned long long opaque[16];
};
}  // namespace fb
#define FB_GRID_CONSTANT
#else
#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
namespace fb {
using WgmmaTensorMap = CUtensorMap;
}  // namespace fb
#define FB_GRID_CONSTANT __grid_constant__
#endif

namespace fb {

// The A and B maps of one launch.
struct WgmmaOperands {
  WgmmaTensorMap a, b;
};

// Maps for A (rows x depth, boxes of kWgmmaCtaM rows) and B (cols x depth, boxes of b_box_rows
// rows: the tile's width, 128 or 192); depth a multiple of 16, both bases 16-byte aligned. Throws
// DeviceError naming the reason (no driver entry point, or the driver refused the map).
WgmmaOperands wgmma_operands(const std::uint8_t* a, std::int64_t rows, const std::uint8_t* b, std::int64_t cols,
                             std::int64_t depth, int b_box_rows);
// One map of the same form with boxes of box_rows rows (the MoE engine's staged token rows); `what`
// names it in the error.
WgmmaTensorMap wgmma_rows_map(const char* what, const std::uint8_t* base, std::int64_t rows, int box_rows,
                              std::int64_t depth);

// The staged epilogue's map of C (fp8_gemm_wgmma_store.hpp): bf16 rows x cols, boxes of 64 rows x
// 64 columns in the 128-byte swizzle. It exists where wgmma_output_map_fits: the TMA needs the
// base 16-byte aligned and a row a multiple of 16 bytes (cols % 8 == 0); elsewhere the kernels
// store from the registers.
bool wgmma_output_map_fits(const std::uint16_t* c, std::int64_t cols);
WgmmaTensorMap wgmma_output_map(std::uint16_t* c, std::int64_t rows, std::int64_t cols);

}  // namespace fb
