// The project's exp against exp in double, over every fp32 from -104 to 89 (every input that gives
// a finite, non-zero result, plus the edges), and its special values. The bound asserted here is the
// project's stated accuracy; the maximum found is printed, for the README.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "reference/math/exact_exp.hpp"

namespace fb {
namespace {

// |got - ref| in units of the fp32 ulp at ref (ulp of the binade that holds ref; subnormal spacing below).
double ulp_error(float got, double ref) {
  const double ulp = ref < std::ldexp(1.0, -126) ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::ilogb(ref) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

TEST(ExactExp, WithinOneUlpOfExpInDoubleOverItsWholeRange) {
  double worst = 0.0;
  float worst_x = 0.0f;
  const std::uint32_t neg_end = float_bits(-104.0f), pos_end = float_bits(89.0f);
  // Negative inputs: bit patterns 0x80000000 .. bits(-104); positive: 0 .. bits(89).
  for (int side = 0; side < 2; ++side) {
    const std::uint32_t begin = side ? 0x80000000u : 0u;
    const std::uint32_t end = side ? neg_end : pos_end;
#pragma omp parallel
    {
      double local = 0.0;
      float local_x = 0.0f;
#pragma omp for schedule(static, 1 << 16)
      for (std::int64_t i = begin; i <= static_cast<std::int64_t>(end); ++i) {
        const float x = bits_float(static_cast<std::uint32_t>(i));
        const double ref = std::exp(static_cast<double>(x));
        const float got = exact_exp(x);
        double err;
        if (ref > std::numeric_limits<float>::max()) err = std::isinf(got) ? 0.0 : INFINITY;
        else if (ref < std::ldexp(1.0, -150)) err = got == 0.0f ? 0.0 : ulp_error(got, ref);
        else err = ulp_error(got, ref);
        if (err > local) {
          local = err;
          local_x = x;
        }
      }
#pragma omp critical
      if (local > worst) {
        worst = local;
        worst_x = local_x;
      }
    }
  }
  std::printf("exact_exp: max error %.4f ulp (at x = %.9g) over every fp32 in [-104, 89]\n", worst, worst_x);
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
}

TEST(ExactExp, SpecialValues) {
  EXPECT_EQ(exact_exp(0.0f), 1.0f);
  EXPECT_EQ(exact_exp(-0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(exact_exp(89.0f)));
  EXPECT_TRUE(std::isinf(exact_exp(INFINITY)));
  EXPECT_EQ(exact_exp(-INFINITY), 0.0f);
  EXPECT_EQ(exact_exp(-104.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exact_exp(NAN)));
  EXPECT_GT(exact_exp(-103.0f), 0.0f);  // subnormal results are kept, not flushed
}

TEST(ExactSigmoid, SaturatesCleanlyAndIsSymmetricAroundZero) {
  EXPECT_EQ(exact_sigmoid(0.0f), 0.5f);
  EXPECT_EQ(exact_sigmoid(-200.0f), 0.0f);  // exp overflows to inf, 1 / inf = 0
  EXPECT_EQ(exact_sigmoid(200.0f), 1.0f);
  for (float z = -20.0f; z <= 20.0f; z += 0.37f) {
    const double ref = 1.0 / (1.0 + std::exp(-static_cast<double>(z)));
    EXPECT_NEAR(exact_sigmoid(z), ref, 4 * std::ldexp(1.0, std::ilogb(ref) - 23)) << z;
  }
}

}  // namespace
}  // namespace fb
