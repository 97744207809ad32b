// The fast MoE GEMM variant's arithmetic (kernels/moe_gemm/moe_gemm_fast.hpp): the per-block tables
// relative to the row's largest scale are exact in the window and drop below it, the row factor
// restores the value exactly, and the row maximum is the largest byte. The emulation and the GPU
// against fp64 and exact: moe_gemm_test.cpp (MoeGemmFast*, MoeGemmGpu).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "kernels/moe_gemm/moe_gemm_fast.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

// Every code of a word (all 16 in two words), converted with the table of (s, c): in the window
// the e4m3 value is the code's times 2^(s - c + 6), and times the row factor it is the code's value
// times 2^(s - 127) exactly; below the window every code is +-0.
TEST(MoeGemmFast, TablesAreExactInTheWindowAndDropBelowIt) {
  for (const std::uint32_t c : {0u, 5u, 12u, 60u, 127u, 200u, 254u}) {
    const double factor = mx_fast_row_factor(c);
    ASSERT_EQ(factor, std::ldexp(1.0, static_cast<int>(c) - 133)) << c;
    for (int below = 0; below <= 20 && below <= static_cast<int>(c); ++below) {
      const std::uint32_t s = c - static_cast<std::uint32_t>(below);
      const bool kept = below <= kMxFastWindow;
      ASSERT_EQ(mx_fast_shift(s, c), kept ? kMxFastWindow - below : -1);
      const E2m1E4m3Table table = mx_fast_table(s, c);
      for (const std::uint32_t word : {0x76543210u, 0xFEDCBA98u}) {
        std::uint32_t first, last;
        e2m1x8_to_e4m3x8_by_table(word, table, first, last);
        for (int e = 0; e < 8; ++e) {
          const auto code = static_cast<std::uint8_t>((word >> (4 * e)) & 0xFu);
          const auto byte = static_cast<std::uint8_t>((e < 4 ? first : last) >> (8 * (e % 4)));
          const double got = fp8_e4m3fn_to_float(byte), value = e2m1_to_float(code);
          if (!kept) {
            ASSERT_EQ(got, 0.0) << "s " << s << " c " << c << " code " << int(code);
            continue;
          }
          ASSERT_EQ(got, value * std::ldexp(1.0, static_cast<int>(s) - static_cast<int>(c) + 6))
              << "s " << s << " c " << c << " code " << int(code);
          ASSERT_EQ(got * factor, value * std::ldexp(1.0, static_cast<int>(s) - 127));
        }
      }
    }
  }
}

TEST(MoeGemmFast, RowFactorIsAPowerOfTwoAndNanForTheNanScale) {
  for (std::uint32_t c = 0; c < 255; ++c)
    ASSERT_EQ(static_cast<double>(mx_fast_row_factor(c)), std::ldexp(1.0, static_cast<int>(c) - 133)) << c;
  EXPECT_TRUE(std::isnan(mx_fast_row_factor(255)));
  EXPECT_TRUE(std::isnan(mx_fast_finish(1.0f, mx_fast_row_factor(255), 1.0f)));
  EXPECT_TRUE(std::isnan(mx_fast_finish(0.0f, 1.0f, mx_fast_row_factor(255))));  // a zero sum too
}

TEST(MoeGemmFast, RowMaximumIsTheLargestScaleByte) {
  std::mt19937 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const std::uint32_t running = rng() & 0xFFu, word = rng();
    std::uint32_t want = running;
    for (int b = 0; b < 4; ++b) want = std::max(want, (word >> (8 * b)) & 0xFFu);
    ASSERT_EQ(mx_max_scale_byte(running, word), want);
  }
}

}  // namespace
}  // namespace fb
