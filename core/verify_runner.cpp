#include "core/verify_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/checks.hpp"
#include "core/errors.hpp"
#include "core/fingerprint.hpp"
#include "core/inputs.hpp"
#include "core/variant_runner.hpp"

namespace fb {
namespace {

// Test-only: flip the low bit of one element that a claim covers: the middle of the first output's
// first compared range (in both runs of the variant, so it looks like a deterministic bug).
std::string inject_fault(HostTensors& outputs, HostTensors* rerun, const std::vector<Region>& regions) {
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Region& region = regions[o];
    const ElementRange range = region.empty() ? ElementRange{0, outputs[o].spec.elements()} : region.front();
    if (range.end <= range.begin) continue;
    const std::int64_t index = range.begin + (range.end - range.begin) / 2;
    const std::size_t byte = static_cast<std::size_t>(index) * dtype_size(outputs[o].spec.dtype);
    outputs[o].bytes[byte] ^= 0x01;
    if (rerun) (*rerun)[o].bytes[byte] ^= 0x01;
    return fmt::format("{} element {}", outputs[o].spec.name, index);
  }
  return "nothing (no output has a compared element)";
}

bool pair_covers(const PairClaim& pair, const std::string& output) {
  return pair.outputs.empty() || std::find(pair.outputs.begin(), pair.outputs.end(), output) != pair.outputs.end();
}

}  // namespace

std::uint64_t input_seed_for(std::uint64_t run_seed, const std::string& case_name, const Point& point) {
  std::uint64_t h = mix64(run_seed);
  for (char ch : case_name + "|" + point.where_text()) h = mix64(h ^ static_cast<unsigned char>(ch));
  return h;
}

CaseResult new_case_result(const KernelCase& kc, const Point& point, Backend backend, std::uint64_t run_seed) {
  CaseResult r;
  r.case_name = kc.name;
  r.family = kc.family;
  r.fusion = kc.fusion;
  r.claim = kc.claims_text();
  r.point = point;
  r.backend = backend;
  r.run_seed = run_seed;
  r.input_seed = input_seed_for(run_seed, kc.name, point);
  for (const VariantSpec& v : kc.variants) r.variants.push_back(v.name);
  return r;
}

void settle_outcome(CaseResult& r) {
  if (r.outcome == Outcome::error || r.outcome == Outcome::skipped) return;
  r.outcome = Outcome::pass;
  for (const CheckResult& c : r.checks) {
    if (c.passed) continue;
    if (c.mistrusted) {
      r.outcome = Outcome::mistrusted;
      r.reason = c.id + " " + c.message;
      return;
    }
    if (r.outcome == Outcome::pass) {
      r.outcome = Outcome::fail;
      r.reason = c.id + " " + c.message;
    }
  }
}

CheckSubset choose_check_subset(const CaseInstance& instance, std::size_t checked_variants, std::uint64_t input_seed,
                                const VerifyOptions& options) {
  CheckSubset s;
  s.unit = instance.check_unit_name();
  s.total = instance.check_units();
  const double cost = instance.check_cost() * static_cast<double>(std::max<std::size_t>(checked_variants, 1));
  if (options.full_check || s.total <= 1 || cost <= options.check_budget) return s;
  // Units in proportion to the budget, at least 2: the first and the last (edges of the shape),
  // the rest drawn by a seeded hash, so the same seed and point check the same units.
  const auto wanted = static_cast<std::int64_t>(
      std::clamp(std::floor(static_cast<double>(s.total) * options.check_budget / cost), 2.0, static_cast<double>(s.total)));
  if (wanted >= s.total) return s;
  s.full = false;
  s.seed = mix64(input_seed ^ 0x5EB5E7C0FFEEull);
  std::set<std::int64_t> units{0, s.total - 1};
  for (std::uint64_t i = 0; static_cast<std::int64_t>(units.size()) < wanted; ++i)
    units.insert(static_cast<std::int64_t>(mix64(s.seed + i) % static_cast<std::uint64_t>(s.total)));
  s.units.assign(units.begin(), units.end());
  return s;
}

CaseResult verify_case(const KernelCase& kc, const Point& point, const VerifyOptions& options, Session& session) {
  const auto started = std::chrono::steady_clock::now();
  const Backend backend = session.backend();
  CaseResult r = new_case_result(kc, point, backend, options.seed);
  const std::unique_ptr<CaseInstance> instance = kc.make(point);
  r.distribution = instance->distribution_text();
  if (const std::string why = instance->skip_reason(backend); !why.empty()) {
    r.outcome = Outcome::skipped;
    r.reason = why;
    return r;
  }
  const std::vector<TensorSpec> out_specs = instance->outputs();
  for (const TensorSpec& s : out_specs) r.output_shapes.push_back(s.name + ":" + s.shape_text());
  const std::size_t nv = kc.variants.size();

  HostTensors inputs = allocate_host(instance->inputs());
  instance->prepare_weights(r.input_seed, inputs);
  instance->generate(r.input_seed, inputs);

  // Which variants run here, and which are checked (the subject of a pair): those run twice, under
  // both poisons, so unwritten elements and non-determinism show.
  std::vector<bool> runs(nv, true), checked(nv, false);
  for (VariantId v = 0; v < nv; ++v) {
    if (std::string why = instance->variant_skip_reason(v, backend); !why.empty()) {
      runs[v] = false;
      r.skipped_variants.emplace_back(kc.variants[v].name, std::move(why));
    }
  }
  for (VariantId v = 0; v < nv; ++v)
    if (runs[v])
      if (std::string form = instance->launch_config(v, backend); !form.empty())
        r.launch_configs.emplace_back(kc.variants[v].name, std::move(form));
  for (const PairClaim& p : kc.pairs) checked[kc.variant_id(p.variant)] = true;

  VariantRunner runner(*instance, nv, backend, session.stream());
  runner.add_input_set(inputs);
  std::vector<std::optional<HostTensors>> first(nv), rerun(nv);
  for (VariantId v = 0; v < nv; ++v)
    if (runs[v]) first[v] = runner.run(v, Poison::nan);
  for (VariantId v = 0; v < nv; ++v)
    if (runs[v] && checked[v]) rerun[v] = runner.run(v, Poison::alternate);

  // The elements that carry the claims, as the first pair's reference defines them.
  std::vector<Region> regions(out_specs.size());
  if (!kc.pairs.empty()) {
    const VariantId ref = kc.variant_id(kc.pairs.front().reference);
    if (first[ref])
      for (std::size_t i = 0; i < out_specs.size(); ++i) regions[i] = instance->compared_region(i, *first[ref]);
  }
  std::string fault_site;
  if (options.fault == FaultInjection::flip_fused_element && !kc.pairs.empty()) {
    const VariantId v = kc.variant_id(kc.pairs.front().variant);
    if (first[v]) fault_site = inject_fault(*first[v], rerun[v] ? &*rerun[v] : nullptr, regions);
  }

  // Pairs: the claims, over whole outputs.
  for (const PairClaim& p : kc.pairs) {
    const VariantId a = kc.variant_id(p.variant), b = kc.variant_id(p.reference);
    if (!first[a] || !first[b]) continue;  // a skipped variant: recorded in skipped_variants
    const std::string id = fmt::format("check/pair/{}~{}/{}", p.variant, p.reference,
                                       p.claim.kind == Claim::Kind::bitwise ? "bitwise" : "bound");
    for (std::size_t i = 0; i < out_specs.size(); ++i) {
      if (!pair_covers(p, out_specs[i].name)) continue;
      if (!kc.variants[a].writes_output(out_specs[i].name) || !kc.variants[b].writes_output(out_specs[i].name))
        throw std::logic_error(fmt::format("{}: pair {}~{} names {}, which one side does not write", kc.name,
                                           p.variant, p.reference, out_specs[i].name));
      r.checks.push_back(p.claim.kind == Claim::Kind::bitwise
                             ? bitwise_check(id, out_specs[i], (*first[a])[i], (*first[b])[i], regions[i],
                                             p.variant.c_str(), p.reference.c_str())
                             : value_bound_check(id, out_specs[i], (*first[a])[i], (*first[b])[i], regions[i], p.claim.bound));
    }
  }

  // The CPU checks' reach: the whole point, or a seeded subset within the budget.
  std::size_t emulated = 0;
  for (VariantId v = 0; v < nv; ++v) emulated += (runs[v] && kc.variants[v].has_emulation) ? 1 : 0;
  r.subset = choose_check_subset(*instance, backend == Backend::gpu ? emulated : 0, r.input_seed, options);
  r.check_cost = instance->check_cost();
  std::vector<Region> checked_regions = regions;
  if (!r.subset.full)
    for (std::size_t i = 0; i < out_specs.size(); ++i)
      checked_regions[i] = intersect_regions(out_specs[i], regions[i], instance->subset_region(i, r.subset));

  // Each variant against fp64.
  for (VariantId v = 0; v < nv; ++v) {
    if (!first[v]) continue;
    for (const Fp64Check& f : instance->check_variant_fp64(v, inputs, *first[v], r.subset))
      r.checks.push_back(bound_check("check/fp64/" + kc.variants[v].name, f.quantity, f.stats, f.bound));
  }
  // GPU against the CPU emulation: each variant as it declares (bitwise, or a derived bound).
  if (backend == Backend::gpu) {
    VariantRunner emu(*instance, nv, Backend::cpu, nullptr);
    if (r.subset.full) emu.add_input_set(inputs);
    for (VariantId v = 0; v < nv; ++v) {
      const VariantSpec& spec = kc.variants[v];
      if (!first[v] || !spec.has_emulation) continue;
      HostTensors cpu = allocate_host(out_specs);
      if (r.subset.full) {
        cpu = emu.run(v, Poison::nan);
      } else {
        for (HostTensor& t : cpu) std::fill(t.bytes.begin(), t.bytes.end(), poison_byte(t.spec.dtype, Poison::nan));
        instance->emulate_subset(v, inputs, cpu, r.subset);
      }
      const std::string id = "check/emu/" + spec.name;
      for (std::size_t i = 0; i < out_specs.size(); ++i) {
        if (!spec.writes_output(out_specs[i].name)) continue;
        r.checks.push_back(spec.emulation.kind == Claim::Kind::bitwise
                               ? bitwise_check(id, out_specs[i], (*first[v])[i], cpu[i], checked_regions[i], "gpu", "cpu")
                               : value_bound_check(id, out_specs[i], (*first[v])[i], cpu[i], checked_regions[i],
                                                   spec.emulation.bound));
      }
    }
  }
  // Checks across variants the case defines (F6's "no worse than the chain against fp64").
  {
    std::vector<const HostTensors*> by_variant(nv, nullptr);
    for (VariantId v = 0; v < nv; ++v) by_variant[v] = first[v] ? &*first[v] : nullptr;
    for (CheckResult& c : instance->case_checks(inputs, by_variant, r.subset)) r.checks.push_back(std::move(c));
  }
  // Repeatability (deterministic variants), and poison that survived both runs of a variant.
  for (VariantId v = 0; v < nv; ++v) {
    if (!rerun[v]) continue;
    for (std::size_t i = 0; i < out_specs.size(); ++i) {
      if (!kc.variants[v].writes_output(out_specs[i].name)) continue;  // its poison stays, by design
      if (kc.variants[v].deterministic)
        r.checks.push_back(bitwise_check("check/repeat/" + kc.variants[v].name, out_specs[i], (*rerun[v])[i],
                                         (*first[v])[i], regions[i], "rerun", "first"));
      r.checks.push_back(unwritten_check(out_specs[i], (*first[v])[i], (*rerun[v])[i], regions[i]));
    }
    if (every_input_varies(inputs)) {
      for (std::size_t i = 0; i < out_specs.size(); ++i) {
        if (!kc.variants[v].writes_output(out_specs[i].name)) continue;
        if (auto c = uniform_check(out_specs[i], (*first[v])[i], regions[i])) r.checks.push_back(std::move(*c));
      }
    }
  }

  for (VariantId v = 0; v < nv; ++v) {
    if (!first[v]) continue;
    for (std::size_t i = 0; i < out_specs.size(); ++i)
      if (kc.variants[v].writes_output(out_specs[i].name))
        r.fingerprints.emplace_back(kc.variants[v].name + "/" + out_specs[i].name, fingerprint_text((*first[v])[i].bytes));
  }
  settle_outcome(r);
  if (!fault_site.empty() && r.outcome == Outcome::pass) {
    // The harness itself is at fault: a corrupted output went through every check.
    CheckResult c;
    c.id = "check/trust/fault_injection";
    c.subject = fault_site;
    c.message = "a fault injected into " + fault_site + " was not detected by any check";
    r.checks.push_back(c);
    settle_outcome(r);
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace fb
