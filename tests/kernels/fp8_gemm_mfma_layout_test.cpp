// The AMD fp8 MFMA kernel's fragment mapping (fp8_gemm_mfma_layout.hpp), simulated on the CPU: the
// bytes each lane hands each v_mfma_f32_16x16x32_fp8_fp8, combined as the instruction's documented
// layout says, and stored as the kernel stores them, must give every (column, row) of the tile the
// dot product of its 128-K block. No AMD device has run the kernel; this checks the kernel's
// indexing against the layout it was written for, not the hardware.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "kernels/fp8_gemm/fp8_gemm_mfma_layout.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

constexpr int kK = kMfmaK * kMfmaPerBlock;  // one 128-K block

TEST(Fp8GemmMfmaLayout, FourInstructionsCoverEveryByteOfTheBlockOnceForEveryRow) {
  for (int row = 0; row < kMfmaTile; ++row) {
    std::array<int, kK> seen{};
    for (int lane = 0; lane < kMfmaLanes; ++lane) {
      if (mfma_operand_row(lane) != row) continue;
      for (int j = 0; j < kMfmaPerBlock; ++j)
        for (int e = 0; e < 8; ++e) ++seen[static_cast<std::size_t>(mfma_block_byte(lane, j, e))];
    }
    for (int k = 0; k < kK; ++k) EXPECT_EQ(seen[static_cast<std::size_t>(k)], 1) << "row " << row << " byte " << k;
  }
}

TEST(Fp8GemmMfmaLayout, SimulatedInstructionsOnTheKernelsOperandsGiveTheBlockDotProducts) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  // A: 16 weight rows (output columns), B: 16 activation rows (tokens), 128 e4m3fnuz bytes each;
  // 0x80 (NaN) replaced by 0 so the exact sums stay finite.
  std::array<std::array<std::uint8_t, kK>, kMfmaTile> w{}, x{};
  for (auto* m : {&w, &x})
    for (auto& r : *m)
      for (auto& b : r) {
        b = static_cast<std::uint8_t>(byte(rng));
        if (b == 0x80) b = 0;
      }
  // D = sum over the 4 instructions of A_j B_j, from the lanes' operand bytes (fp8 products and
  // their sums are exact in double at these ranges, so the order does not matter).
  std::array<std::array<double, kMfmaTile>, kMfmaTile> d{};  // d[i][j]: A row i, B column j
  for (int j_inst = 0; j_inst < kMfmaPerBlock; ++j_inst) {
    // Logical operands of instruction j_inst, filled from the lanes as the layout assigns them.
    std::array<std::array<double, kMfmaK>, kMfmaTile> a_op{}, b_op{};  // [row][k], [column][k]
    for (int lane = 0; lane < kMfmaLanes; ++lane)
      for (int e = 0; e < 8; ++e) {
        const int k = 8 * mfma_operand_group(lane) + e;
        const int at = mfma_block_byte(lane, j_inst, e);
        const int rc = mfma_operand_row(lane);
        a_op[static_cast<std::size_t>(rc)][static_cast<std::size_t>(k)] = fp8_e4m3fnuz_to_float(w[static_cast<std::size_t>(rc)][static_cast<std::size_t>(at)]);
        b_op[static_cast<std::size_t>(rc)][static_cast<std::size_t>(k)] = fp8_e4m3fnuz_to_float(x[static_cast<std::size_t>(rc)][static_cast<std::size_t>(at)]);
      }
    for (int i = 0; i < kMfmaTile; ++i)
      for (int jj = 0; jj < kMfmaTile; ++jj)
        for (int k = 0; k < kMfmaK; ++k)
          d[static_cast<std::size_t>(i)][static_cast<std::size_t>(jj)] +=
              a_op[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)] * b_op[static_cast<std::size_t>(jj)][static_cast<std::size_t>(k)];
  }
  // The kernel's store (lane element r to partial[result col][result row]) and its finisher's
  // read (partial[token][column]).
  std::array<double, kMfmaTile * kMfmaTile> partial{};
  std::array<int, kMfmaTile * kMfmaTile> stores{};
  for (int lane = 0; lane < kMfmaLanes; ++lane)
    for (int r = 0; r < 4; ++r) {
      const int at = mfma_result_col(lane) * kMfmaTile + mfma_result_row(lane, r);
      partial[static_cast<std::size_t>(at)] = d[static_cast<std::size_t>(mfma_result_row(lane, r))][static_cast<std::size_t>(mfma_result_col(lane))];
      ++stores[static_cast<std::size_t>(at)];
    }
  for (int token = 0; token < kMfmaTile; ++token)
    for (int column = 0; column < kMfmaTile; ++column) {
      double want = 0.0;
      for (int k = 0; k < kK; ++k)
        want += static_cast<double>(fp8_e4m3fnuz_to_float(w[static_cast<std::size_t>(column)][static_cast<std::size_t>(k)])) *
                fp8_e4m3fnuz_to_float(x[static_cast<std::size_t>(token)][static_cast<std::size_t>(k)]);
      const std::size_t at = static_cast<std::size_t>(token * kMfmaTile + column);
      EXPECT_EQ(stores[at], 1) << token << " " << column;
      EXPECT_EQ(partial[at], want) << "token " << token << " column " << column;
    }
}

}  // namespace
}  // namespace fb
