#include "reference/metrics/bitwise_compare.hpp"

#include <cstring>
#include <stdexcept>

namespace fb {

std::vector<std::int64_t> unflatten_index(std::int64_t index, std::span<const std::int64_t> extents) {
  std::vector<std::int64_t> coords(extents.size(), 0);
  for (std::size_t d = extents.size(); d-- > 0;) {
    const std::int64_t extent = extents[d] > 0 ? extents[d] : 1;
    coords[d] = index % extent;
    index /= extent;
  }
  return coords;
}

BitwiseResult compare_bitwise(DType dtype, std::span<const std::uint8_t> got, std::span<const std::uint8_t> want,
                              std::span<const std::int64_t> extents, std::span<const ElementRange> region) {
  if (got.size() != want.size()) throw std::invalid_argument("compare_bitwise: tensors differ in size");
  const std::size_t width = dtype_size(dtype);
  const auto count = static_cast<std::int64_t>(got.size() / width);
  const ElementRange whole{0, count};
  const std::span<const ElementRange> ranges = region.empty() ? std::span<const ElementRange>(&whole, 1) : region;

  BitwiseResult result;
  for (const ElementRange& range : ranges) {
    // Fast path: identical bytes over the range leave only NaN to look for.
    const std::uint8_t* g = got.data() + range.begin * width;
    const std::uint8_t* w = want.data() + range.begin * width;
    const std::size_t bytes = static_cast<std::size_t>(range.end - range.begin) * width;
    const bool same = std::memcmp(g, w, bytes) == 0;
    result.compared += range.end - range.begin;
    for (std::int64_t i = range.begin; i < range.end; ++i) {
      const std::uint8_t* gi = got.data() + i * width;
      const std::uint8_t* wi = want.data() + i * width;
      const bool nan = element_is_nan(dtype, gi) || element_is_nan(dtype, wi);
      const bool differ = !same && std::memcmp(gi, wi, width) != 0;
      if (!nan && !differ) continue;
      result.nan += nan ? 1 : 0;
      ++result.mismatches;
      if (!result.first) {
        result.first = ElementMismatch{i, unflatten_index(i, extents), element_text(dtype, gi), element_text(dtype, wi)};
      }
    }
  }
  result.equal = result.mismatches == 0;
  return result;
}

}  // namespace fb
