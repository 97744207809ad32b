// One named check of a verified point: what was compared, whether it held, and its evidence.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fb {

struct CheckResult {
  std::string id;       // "check/pair/fused~chain/bitwise", "check/fp64/fused", "check/emu/chain", "check/repeat/fused"
  std::string subject;  // the output (or derived quantity) compared
  bool passed = false;
  bool mistrusted = false;
  std::string message;  // one line
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
};

}  // namespace fb
