// register_router(): the router family's cases (router_gate_case.cpp: router/gate,
// router_swiglu_cases.cpp: router/gate_swiglu (F3), decode_router_cases.cpp: router/decode (F4)).
#include "core/registry.hpp"
#include "kernels/router/router_cases.hpp"

namespace fb {

void register_router(Registry& registry) {
  registry.add(router_gate_case());
  registry.add(router_swiglu_case());
  registry.add(decode_router_case());
}

}  // namespace fb
