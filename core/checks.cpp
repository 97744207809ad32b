#include "core/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/buffers.hpp"
#include "reference/codecs/e2m1.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

std::string coords_text(const TensorSpec& spec, const std::vector<std::int64_t>& coords) {
  std::string s;
  for (std::size_t d = 0; d < coords.size() && d < spec.dims.size(); ++d)
    s += fmt::format("[{}={}]", spec.dims[d].name, coords[d]);
  return s;
}

Region whole_or(const TensorSpec& spec, const Region& region) {
  return region.empty() ? Region{{0, spec.elements()}} : region;
}

double metric_value(const ErrorStats& s, const std::string& metric) {
  const double none = std::numeric_limits<double>::quiet_NaN();  // fails every comparison
  if (metric == "err/ulp/max") return s.has_ulp ? static_cast<double>(s.ulp_max) : none;
  if (metric == "err/ulp/p99") return s.has_ulp ? static_cast<double>(s.ulp_p99) : none;
  if (metric == "err/abs/max") return s.abs_max;
  if (metric == "err/rel/max") return s.rel_max;
  if (metric == "err/rmse") return s.rmse;
  if (metric == "err/rel_l2") return s.rel_l2;
  throw std::logic_error("unknown metric " + metric);
}

Json stats_json(const ErrorStats& s) {
  Json j;
  j["count/elements"] = s.elements;
  j["count/nan"] = s.nan;
  j["count/inf"] = s.inf;
  j["err/abs/max"] = s.abs_max;
  j["err/rel/max"] = s.rel_max;
  j["err/rmse"] = s.rmse;
  j["err/rel_l2"] = s.rel_l2;
  if (s.has_ulp) {
    j["err/ulp/max"] = s.ulp_max;
    j["err/ulp/p99"] = s.ulp_p99;
  }
  j["worst_index"] = s.worst_index;
  return j;
}

}  // namespace

Region intersect_regions(const TensorSpec& spec, const Region& a, const Region& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  Region x = whole_or(spec, a), y = whole_or(spec, b);
  auto by_begin = [](const ElementRange& l, const ElementRange& r) { return l.begin < r.begin; };
  std::sort(x.begin(), x.end(), by_begin);
  std::sort(y.begin(), y.end(), by_begin);
  Region out;
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const std::int64_t lo = std::max(x[i].begin, y[j].begin), hi = std::min(x[i].end, y[j].end);
    if (lo < hi) out.push_back({lo, hi});
    (x[i].end < y[j].end) ? ++i : ++j;
  }
  // An empty intersection must not read as "everything": one empty range compares nothing.
  if (out.empty()) out.push_back({0, 0});
  return out;
}

std::int64_t region_elements(const TensorSpec& spec, const Region& region) {
  std::int64_t n = 0;
  for (const ElementRange& r : whole_or(spec, region)) n += r.end - r.begin;
  return n;
}

CheckResult bitwise_check(const std::string& id, const TensorSpec& spec, const HostTensor& got, const HostTensor& want,
                          const Region& region, const char* got_label, const char* want_label) {
  const BitwiseResult b = compare_bitwise(spec.dtype, got.bytes, want.bytes, spec.extents(), region);
  CheckResult c;
  c.id = id;
  c.subject = spec.name;
  c.passed = b.equal;
  c.details["compared"] = b.compared;
  c.details["mismatches"] = b.mismatches;
  c.details["nan"] = b.nan;
  if (b.equal) {
    c.message = fmt::format("{}: {} elements bitwise equal", spec.name, b.compared);
  } else {
    const ElementMismatch& m = *b.first;
    c.message = fmt::format("{}: {} of {} elements differ ({} NaN); first at {} (index {}): {} {} vs {} {}", spec.name,
                            b.mismatches, b.compared, b.nan, coords_text(spec, m.coords), m.index, got_label, m.got,
                            want_label, m.want);
    c.details["first_mismatch"] = Json{{"index", m.index}, {"coords", m.coords}, {got_label, m.got}, {want_label, m.want}};
  }
  return c;
}

CheckResult bound_check(const std::string& id, const std::string& subject, const ErrorStats& stats, const Bound& bound) {
  CheckResult c;
  c.id = id;
  c.subject = subject;
  const double value = metric_value(stats, bound.metric);
  c.passed = stats.nan == 0 && stats.inf == 0 && value <= bound.limit;
  c.details["metrics"] = stats_json(stats);
  c.details["bound"] = Json{{"metric", bound.metric}, {"limit", bound.limit}, {"reason", bound.reason}};
  c.details["margin"] = bound.limit - value;
  if (stats.nan || stats.inf) {
    c.message = fmt::format("{}: {} NaN and {} inf elements (NaN never passes)", subject, stats.nan, stats.inf);
  } else if (std::isnan(value)) {
    c.message = fmt::format("{}: {} was not measured for this output", subject, bound.metric);
  } else {
    c.message = fmt::format("{}: {} {:.6g} {} {:g} (margin {:.3g})", subject, bound.metric, value,
                            c.passed ? "<=" : ">", bound.limit, bound.limit - value);
  }
  return c;
}

CheckResult value_bound_check(const std::string& id, const TensorSpec& spec, const HostTensor& got,
                              const HostTensor& want, const Region& region, const Bound& bound) {
  ErrorAccumulator acc;
  const std::size_t width = dtype_size(spec.dtype);
  for (const ElementRange& r : whole_or(spec, region)) {
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      const std::uint8_t* g = got.bytes.data() + i * width;
      const std::uint8_t* w = want.bytes.data() + i * width;
      if (spec.dtype == DType::e2m1x2) {  // two values per byte
        acc.add(2 * i, e2m1_to_float(*g & 0xFu), e2m1_to_float(*w & 0xFu));
        acc.add(2 * i + 1, e2m1_to_float(*g >> 4), e2m1_to_float(*w >> 4));
      } else {
        acc.add(i, element_value(spec.dtype, g), element_value(spec.dtype, w));
      }
    }
  }
  return bound_check(id, spec.name, acc.finish(), bound);
}

CheckResult unwritten_check(const TensorSpec& spec, const HostTensor& first, const HostTensor& rerun,
                            const Region& region) {
  const std::size_t width = dtype_size(spec.dtype);
  const std::uint8_t nan_byte = poison_byte(spec.dtype, Poison::nan);
  const std::uint8_t alternate_byte = poison_byte(spec.dtype, Poison::alternate);
  std::int64_t unwritten = 0, first_index = -1;
  for (const ElementRange& r : whole_or(spec, region)) {
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      bool poisoned = true;
      for (std::size_t b = 0; b < width && poisoned; ++b)
        poisoned = first.bytes[i * width + b] == nan_byte && rerun.bytes[i * width + b] == alternate_byte;
      if (!poisoned) continue;
      if (first_index < 0) first_index = i;
      ++unwritten;
    }
  }
  CheckResult c;
  c.id = "check/trust/unwritten";
  c.subject = spec.name;
  c.passed = unwritten == 0;
  c.mistrusted = !c.passed;
  c.details["unwritten"] = unwritten;
  c.message = c.passed ? fmt::format("{}: every compared element written", spec.name)
                       : fmt::format("{}: {} elements never written (poison survived both runs); first at {}", spec.name,
                                     unwritten, coords_text(spec, unflatten_index(first_index, spec.extents())));
  return c;
}

std::optional<CheckResult> uniform_check(const TensorSpec& spec, const HostTensor& output, const Region& region) {
  if (spec.constant_ok || region_elements(spec, region) < 64) return std::nullopt;
  const std::size_t width = dtype_size(spec.dtype);
  const Region ranges = whole_or(spec, region);
  const std::uint8_t* reference = output.bytes.data() + ranges.front().begin * width;
  for (const ElementRange& r : ranges)
    for (std::int64_t i = r.begin; i < r.end; ++i)
      if (std::memcmp(reference, output.bytes.data() + i * width, width) != 0) return std::nullopt;
  CheckResult c;
  c.id = "check/trust/uniform";
  c.subject = spec.name;
  c.mistrusted = true;
  c.message = fmt::format("{}: every compared element is {} although every input varies", spec.name,
                          element_text(spec.dtype, reference));
  return c;
}

bool every_input_varies(const HostTensors& inputs) {
  for (const HostTensor& t : inputs) {
    if (t.spec.weight) continue;  // a prepared weight may be constant (a scale of 1, say)
    const std::size_t width = dtype_size(t.spec.dtype);
    bool varies = t.bytes.size() <= width;
    for (std::size_t i = width; i < t.bytes.size() && !varies; i += width)
      varies = std::memcmp(t.bytes.data(), t.bytes.data() + i, width) != 0;
    if (!varies) return false;
  }
  return true;
}

}  // namespace fb
