// The block-scale fp8 GEMM cases (registered by register_fp8_gemm_blockscale), and the F7 case's
// factory with a switch for the tests: a producer that does not zero the buffer.
#pragma once

#include "core/kernel_case.hpp"

namespace fb {

// F7: RMSNorm -> fp8 (1x128) -> split-K block-scale GEMM; variants `memset` and `prezeroed`.
// producer_zeroes = false builds the broken producer the harness must catch (tests only).
KernelCase make_fp8_blockscale_f7_case(bool producer_zeroes = true);

}  // namespace fb
