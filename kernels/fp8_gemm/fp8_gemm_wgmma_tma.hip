// Host side of the TMA descriptors (fp8_gemm_wgmma_tma.hpp): cuTensorMapEncodeTiled, found once
// through the runtime's driver entry point so the build needs no link against the driver library.
#include "kernels/fp8_gemm/fp8_gemm_wgmma_tma.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"

#if !defined(__HIPCC__)
#include <cudaTypedefs.h>
#endif

namespace fb {

#if defined(__HIPCC__)
WgmmaOperands wgmma_operands(const std::uint8_t*, std::int64_t, const std::uint8_t*, std::int64_t, std::int64_t, int) {
  throw DeviceError("wgmma_operands: no TMA on AMD");
}
WgmmaTensorMap wgmma_rows_map(const char* what, const std::uint8_t*, std::int64_t, int, std::int64_t) {
  throw DeviceError(std::string("wgmma_rows_map (") + what + "): no TMA on AMD");
}
bool wgmma_output_map_fits(const std::uint16_t*, std::int64_t) { return false; }
WgmmaTensorMap wgmma_output_map(std::uint16_t*, std::int64_t, std::int64_t) {
  throw DeviceError("wgmma_output_map: no TMA on AMD");
}
#else
namespace {

using Encode = PFN_cuTensorMapEncodeTiled_v12000;

Encode encoder() {
  static const Encode fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      (void)cudaGetLastError();
      return static_cast<Encode>(nullptr);
    }
    return reinterpret_cast<Encode>(p);
  }();
  if (fn == nullptr) throw DeviceError("wgmma_operands: the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12+)");
  return fn;
}

WgmmaTensorMap encode(const char* what, const std::uint8_t* base, std::int64_t rows, int box_rows, std::int64_t depth) {
  WgmmaTensorMap map{};
  // Dimension 0 is K (contiguous), dimension 1 the rows; the box is one 128-byte line of K per row,
  // the widest a 128-byte swizzle takes.
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(depth), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(depth)};
  const cuuint32_t box[2] = {128, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<std::uint8_t*>(base), dims, row_stride,
                               box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("TMA: cuTensorMapEncodeTiled refused the {} map ({} x {} bytes at {}, box "
                                  "128 x {}): CUresult {}",
                                  what, rows, depth, static_cast<const void*>(base), box_rows, static_cast<int>(r)));
  return map;
}

}  // namespace

WgmmaOperands wgmma_operands(const std::uint8_t* a, std::int64_t rows, const std::uint8_t* b, std::int64_t cols,
                             std::int64_t depth, int b_box_rows) {
  return WgmmaOperands{encode("A", a, rows, kWgmmaCtaM, depth), encode("B", b, cols, b_box_rows, depth)};
}

WgmmaTensorMap wgmma_rows_map(const char* what, const std::uint8_t* base, std::int64_t rows, int box_rows,
                              std::int64_t depth) {
  return encode(what, base, rows, box_rows, depth);
}

bool wgmma_output_map_fits(const std::uint16_t* c, std::int64_t cols) {
  return cols % 8 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
}

WgmmaTensorMap wgmma_output_map(std::uint16_t* c, std::int64_t rows, std::int64_t cols) {
  WgmmaTensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {kWgmmaStoreBoxCols, kWgmmaTileM};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, c, dims, row_stride, box, element_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("TMA: cuTensorMapEncodeTiled refused the C map ({} x {} bf16 at {}): CUresult {}",
                                  rows, cols, static_cast<const void*>(c), static_cast<int>(r)));
  return map;
}
#endif

}  // namespace fb
