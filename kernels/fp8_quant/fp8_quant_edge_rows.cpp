#include "kernels/fp8_quant/fp8_quant_edge_rows.hpp"

#include <cmath>
#include <vector>

#include "reference/codecs/bf16.hpp"

namespace fb {

void apply_fp8_edge_rows(std::uint16_t* x, std::int64_t rows, std::int64_t cols, std::int64_t group,
                         Fp8Flavour flavour) {
  const float max_value = fp8_max(flavour);
  // A group whose amax is MAX gets the scale fl32(MAX * fl32(1/MAX)) = 1 for both flavours (checked
  // in tests), so the values below reach the encoder unchanged and each is an exact tie.
  const std::uint8_t max_code = flavour == Fp8Flavour::e4m3fn ? 0x7E : 0x7F;
  const float below_max = fp8_to_float(static_cast<std::uint8_t>(max_code - 1), flavour);
  const int bias = flavour == Fp8Flavour::e4m3fn ? 7 : 8;
  const float sub_step = std::ldexp(1.0f, 1 - bias - 3);
  const std::vector<float> ties{1.0625f,         -1.1875f, 2.125f, -0.5f * sub_step, 1.5f * sub_step,
                                0.5f * (max_value + below_max)};
  const std::uint16_t huge = 0x7F7F;  // largest finite bf16

  for (std::int64_t r = 0; r < rows; ++r) {
    std::uint16_t* row = x + r * cols;
    const int pattern = static_cast<int>(r % 8);
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t in_group = c % group;
      const std::int64_t g = c / group;
      switch (pattern) {
        case 0: row[c] = 0x0000; break;
        case 1:
          if (in_group == r % group) row[c] = static_cast<std::uint16_t>(huge | (g % 2 ? 0x8000 : 0));
          break;
        case 2:
          row[c] = bf16_from_float(in_group == 0 ? max_value : ties[static_cast<std::size_t>(in_group) % ties.size()]);
          break;
        case 3:
          if (in_group == 0)
            row[c] = bf16_from_float(max_value);
          else
            row[c] = bf16_from_float(bf16_to_float(row[c]) * std::ldexp(1.0f, -bias - 1));
          break;
        case 4: row[c] = c % 2 ? 0x8000 : 0x0000; break;
        case 5: row[c] = static_cast<std::uint16_t>((row[c] & 0x8000) | (1 + (c % 0x7F)));  // subnormal bf16
          break;
        case 6:
          if (in_group == 0) row[c] = bf16_from_float(4.0f * max_value);
          break;
        default: break;
      }
    }
  }
}

}  // namespace fb
