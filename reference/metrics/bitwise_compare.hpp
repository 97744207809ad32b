// Bitwise comparison of two tensors' raw bytes, element by element.
//
// Equal means every compared element has identical bytes and none is NaN: a NaN never matches
// anything, not even the same NaN bytes, so an output left at its NaN poison cannot pass.
// The first mismatch is reported with its flat index, its coordinates and both values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/codecs/dtype.hpp"

namespace fb {

// Half-open element ranges [begin, end) that a comparison covers; empty means the whole tensor.
struct ElementRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

struct ElementMismatch {
  std::int64_t index = 0;
  std::vector<std::int64_t> coords;
  std::string got;   // element_text of each side
  std::string want;
};

struct BitwiseResult {
  bool equal = true;
  std::int64_t compared = 0;
  std::int64_t mismatches = 0;   // NaN elements included
  std::int64_t nan = 0;          // elements NaN on either side
  std::optional<ElementMismatch> first;
};

// Coordinates of a flat row-major index in a tensor of the given extents.
std::vector<std::int64_t> unflatten_index(std::int64_t index, std::span<const std::int64_t> extents);

BitwiseResult compare_bitwise(DType dtype, std::span<const std::uint8_t> got, std::span<const std::uint8_t> want,
                              std::span<const std::int64_t> extents, std::span<const ElementRange> region = {});

}  // namespace fb
