// A tiny family for testing the harness itself: out[i] = 2 * in[i] in f32 (fused and chain), with
// switchable faults so the runner's checks can be shown to catch each kind of broken kernel.
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
};

// `deterministic` false with a bound claim models an atomics kernel: checked within the bound,
// never bitwise.
KernelCase doubling_case(Fault fault, bool deterministic = true);

}  // namespace fb::testing
