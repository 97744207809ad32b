// The individual checks verify runs on a case's outputs, each returning a named CheckResult.
// All of them honour a compared region (the elements that carry the claim; empty = all).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/results.hpp"
#include "core/tensor.hpp"
#include "reference/metrics/bitwise_compare.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

using Region = std::vector<ElementRange>;

// Raw bytes, element by element; NaN never matches; the first mismatch with coordinates.
CheckResult bitwise_check(const std::string& id, const TensorSpec& spec, const HostTensor& got, const HostTensor& want,
                          const Region& region, const char* got_label, const char* want_label);

// ErrorStats against a Bound: fails on any NaN or inf, or on the metric above its limit (a ulp
// bound with no ulp recorded fails too: it would otherwise pass vacuously).
CheckResult bound_check(const std::string& id, const std::string& subject, const ErrorStats& stats, const Bound& bound);

// Two tensors decoded element by element (e2m1x2: both nibbles) and measured against a bound:
// fused against chain, or GPU against emulation, for cases that claim a bound instead of bits.
CheckResult value_bound_check(const std::string& id, const TensorSpec& spec, const HostTensor& got,
                              const HostTensor& want, const Region& region, const Bound& bound);

// Elements that still hold the poison of both runs of a role (NaN bytes in the first, 0x5A bytes
// in the rerun): never written, so no comparison involving them means anything. Mistrusted if any.
CheckResult unwritten_check(const TensorSpec& spec, const HostTensor& first, const HostTensor& rerun,
                            const Region& region);

// An output whose compared elements (64 or more) are one repeated value although every input
// varies: nothing was computed, or nothing that depends on the inputs. Mistrusted.
std::optional<CheckResult> uniform_check(const TensorSpec& spec, const HostTensor& output, const Region& region);

bool every_input_varies(const HostTensors& inputs);

// The elements in both regions (empty = the whole tensor), as ascending ranges.
Region intersect_regions(const TensorSpec& spec, const Region& a, const Region& b);

// Number of elements a region covers (the whole tensor when empty).
std::int64_t region_elements(const TensorSpec& spec, const Region& region);

}  // namespace fb
