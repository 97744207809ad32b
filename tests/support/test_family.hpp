// A tiny family for testing the harness itself: y = w * x in f32, with w a prepared weight tensor
// (all 2.0), variants fused and chain (and optionally a third, "twin", equal to fused on y; and
// optionally a second output z = x that the twin does not write), switchable
// faults so the runner's checks can be shown to catch each kind of broken kernel, and check units
// of 8 elements so the check-budget subsets can be tested.
#pragma once

#include <memory>

#include "core/kernel_case.hpp"

namespace fb::testing {

enum class Fault {
  none,
  skip_last_element,     // fused never writes the last output element
  chain_off_by_one_ulp,  // chain differs from fused in one element
  nondeterministic,      // fused writes a different value (by far) on each run
  jitter,                // fused moves element 7 by one ulp on every other run (within a rel-L2 bound)
  constant_output,       // fused writes the same value everywhere
  nan_output,            // fused writes NaN into one element (chain too)
  twin_off_by_one_ulp,   // the third variant differs from fused in one element
};

struct TestCaseOptions {
  bool deterministic = true;  // false with a bound claim models an atomics kernel
  bool third_variant = false; // adds "twin", claimed bitwise against fused
  double check_cost_per_element = 0.0;  // > 0: the point may be checked on a subset of 8-element units
  // A second output z = x that fused and chain write and the twin (third_variant) does not: the
  // twin's pair then names y alone, and with twin_declares_writes it says so (VariantSpec::writes).
  bool second_output = false;
  bool twin_declares_writes = true;
};

KernelCase doubling_case(Fault fault, bool deterministic = true);
KernelCase doubling_case(Fault fault, const TestCaseOptions& options);

}  // namespace fb::testing
