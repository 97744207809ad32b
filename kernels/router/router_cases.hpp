// The router family's cases, one factory per file.
#pragma once

#include "core/kernel_case.hpp"
#include "kernels/router/router.hpp"

namespace fb {

KernelCase router_gate_case();     // router/gate: GEMV + gate, fused gate vs reduce + gate
KernelCase router_swiglu_case();   // router/gate_swiglu (F3)
KernelCase decode_router_case();   // router/decode (F4)

// The router's tensors as kernel buffers: x, W, bias from inputs [0, 3); partials, logits, ids,
// weights from outputs [first, first + 4).
RouterBuffers router_buffers(const TensorPointers& in, const TensorPointers& out, std::size_t first = 0);

// Read and write bytes and FLOPs of the router's part of a variant: x, W, bias read once; the
// partials written once (and, with `reduce`, read back by a reduce launch); logits, ids, weights.
Work router_work(const RouterParams& p, bool reduce);

}  // namespace fb
