// Axes and points: the shape and option space of a kernel case, declared where the case is defined.
//
// An axis is an integer (M, K) or a choice among named values (fp8 = e4m3fn | e4m3fnuz). A point
// gives every axis of a case one value; it is what a scenario sweeps, what a report records and
// what a repro line pins with --where.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fb {

using AxisValue = std::variant<std::int64_t, std::string>;

// No integer axis takes a value past 2^31, whatever its declared max: no single extent of a tensor
// any machine holds is that large, and it keeps a product of two extents (M*K, in a family's own
// size arithmetic) inside int64. Sizes of whole tensors are checked separately (TensorSpec).
inline constexpr std::int64_t kMaxAxisInteger = std::int64_t{1} << 31;

std::string axis_value_text(const AxisValue& v);

struct AxisSpec {
  enum class Kind { integer, choice };
  std::string name;
  Kind kind = Kind::integer;
  std::string help;
  std::optional<AxisValue> default_value;   // none: a scenario must give it
  std::vector<std::string> choices;         // for Kind::choice
  std::int64_t min = 1;                     // for Kind::integer
  std::int64_t max = INT64_MAX;

  static AxisSpec integer(std::string name, std::string help, std::optional<std::int64_t> default_value = {},
                          std::int64_t min = 1, std::int64_t max = INT64_MAX);
  static AxisSpec choice(std::string name, std::string help, std::vector<std::string> choices,
                         std::string default_value);

  // Checks one value; returns an empty string or why it is not allowed.
  std::string reject_reason(const AxisValue& v) const;
};

class Point {
 public:
  void set(const std::string& axis, AxisValue value);
  bool has(const std::string& axis) const;
  const AxisValue& at(const std::string& axis) const;  // throws std::out_of_range naming the axis
  std::int64_t integer(const std::string& axis) const;
  const std::string& choice(const std::string& axis) const;
  const std::vector<std::pair<std::string, AxisValue>>& items() const { return items_; }

  std::string text() const;        // "M=24 K=6144 fp8=e4m3fn"
  std::string where_text() const;  // "M=24,K=6144,fp8=e4m3fn" (the --where syntax)
  bool operator==(const Point& other) const { return items_ == other.items_; }

 private:
  std::vector<std::pair<std::string, AxisValue>> items_;  // in axis declaration order
};

}  // namespace fb
