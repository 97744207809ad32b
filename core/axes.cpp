#include "core/axes.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/json_input.hpp"

namespace fb {

std::string axis_value_text(const AxisValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

AxisSpec AxisSpec::integer(std::string name, std::string help, std::optional<std::int64_t> default_value,
                           std::int64_t min, std::int64_t max) {
  AxisSpec a;
  a.name = std::move(name);
  a.kind = Kind::integer;
  a.help = std::move(help);
  if (default_value) a.default_value = *default_value;
  a.min = min;
  a.max = max;
  return a;
}

AxisSpec AxisSpec::choice(std::string name, std::string help, std::vector<std::string> choices,
                          std::string default_value) {
  AxisSpec a;
  a.name = std::move(name);
  a.kind = Kind::choice;
  a.help = std::move(help);
  a.choices = std::move(choices);
  a.default_value = std::move(default_value);
  return a;
}

std::string AxisSpec::reject_reason(const AxisValue& v) const {
  if (kind == Kind::integer) {
    const auto* i = std::get_if<std::int64_t>(&v);
    if (!i) return fmt::format("axis {} takes an integer", name);
    const std::int64_t hi = std::min(max, kMaxAxisInteger);
    if (*i < min || *i > hi) return fmt::format("axis {} must be in [{}, {}], got {}", name, min, hi, *i);
    return {};
  }
  const auto* s = std::get_if<std::string>(&v);
  if (!s) return fmt::format("axis {} takes one of: {}", name, fmt::join(choices, ", "));
  if (std::find(choices.begin(), choices.end(), *s) == choices.end())
    return fmt::format("axis {} takes one of: {}; got '{}'", name, fmt::join(choices, ", "), text_excerpt(*s));
  return {};
}

void Point::set(const std::string& axis, AxisValue value) {
  for (auto& item : items_) {
    if (item.first == axis) {
      item.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(axis, std::move(value));
}

bool Point::has(const std::string& axis) const {
  return std::any_of(items_.begin(), items_.end(), [&](const auto& item) { return item.first == axis; });
}

const AxisValue& Point::at(const std::string& axis) const {
  for (const auto& item : items_)
    if (item.first == axis) return item.second;
  throw std::out_of_range("point has no axis '" + axis + "'");
}

std::int64_t Point::integer(const std::string& axis) const { return std::get<std::int64_t>(at(axis)); }
const std::string& Point::choice(const std::string& axis) const { return std::get<std::string>(at(axis)); }

std::string Point::text() const {
  std::string s;
  for (const auto& [name, value] : items_) s += (s.empty() ? "" : " ") + name + "=" + axis_value_text(value);
  return s;
}

std::string Point::where_text() const {
  std::string s;
  for (const auto& [name, value] : items_) s += (s.empty() ? "" : ",") + name + "=" + axis_value_text(value);
  return s;
}

}  // namespace fb
