#include "core/kernel_case.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace fb {

const char* backend_name(Backend b) { return b == Backend::cpu ? "cpu" : "gpu"; }

std::string Claim::text() const {
  if (kind == Kind::bitwise) return "bitwise";
  return fmt::format("{} <= {:g}", bound.metric, bound.limit);
}

bool CheckSubset::covers(std::int64_t unit) const {
  return full || std::binary_search(units.begin(), units.end(), unit);
}

const AxisSpec* KernelCase::axis(const std::string& name) const {
  for (const AxisSpec& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

bool VariantSpec::writes_output(const std::string& output) const {
  return writes.empty() || std::find(writes.begin(), writes.end(), output) != writes.end();
}

VariantId KernelCase::variant_id(const std::string& variant) const {
  for (VariantId v = 0; v < variants.size(); ++v)
    if (variants[v].name == variant) return v;
  throw std::out_of_range(fmt::format("{} has no variant '{}'", name, variant));
}

bool KernelCase::deterministic() const {
  return std::all_of(variants.begin(), variants.end(), [](const VariantSpec& v) { return v.deterministic; });
}

std::string KernelCase::claims_text() const {
  std::string s;
  for (const PairClaim& p : pairs) s += fmt::format("{}{}~{} {}", s.empty() ? "" : "; ", p.variant, p.reference, p.claim.text());
  return s;
}

std::string KernelCase::variants_text() const {
  std::string s;
  for (const VariantSpec& v : variants) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

std::vector<VariantSpec> fused_and_chain(std::string fused_summary, std::string chain_summary, int fused_launches,
                                         int chain_launches) {
  VariantSpec fused;
  fused.name = "fused";
  fused.summary = std::move(fused_summary);
  fused.launches = fused_launches;
  VariantSpec chain;
  chain.name = "chain";
  chain.summary = std::move(chain_summary);
  chain.launches = chain_launches;
  return {fused, chain};
}

}  // namespace fb
