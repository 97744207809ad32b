#include "core/verify_runner.hpp"

#include <chrono>
#include <tuple>

#include <fmt/format.h>

#include "core/checks.hpp"
#include "core/errors.hpp"
#include "core/fingerprint.hpp"
#include "core/inputs.hpp"
#include "core/role_runner.hpp"

namespace fb {
namespace {

// Test-only: flip the low bit of one element that a claim covers: the middle of the first output's
// first compared range (in both fused runs, so it looks like a deterministic bug). Returns where.
std::string inject_fault(HostTensors& fused, HostTensors& rerun, const std::vector<Region>& regions) {
  for (std::size_t o = 0; o < fused.size(); ++o) {
    const Region& region = regions[o];
    const ElementRange range = region.empty() ? ElementRange{0, fused[o].spec.elements()} : region.front();
    if (range.end <= range.begin) continue;
    const std::int64_t index = range.begin + (range.end - range.begin) / 2;
    const std::size_t byte = static_cast<std::size_t>(index) * dtype_size(fused[o].spec.dtype);
    fused[o].bytes[byte] ^= 0x01;
    rerun[o].bytes[byte] ^= 0x01;
    return fmt::format("{} element {}", fused[o].spec.name, index);
  }
  return "nothing (no output has a compared element)";
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
  r.claim = kc.claim.text();
  r.point = point;
  r.backend = backend;
  r.run_seed = run_seed;
  r.input_seed = input_seed_for(run_seed, kc.name, point);
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

CaseResult verify_case(const KernelCase& kc, const Point& point, const VerifyOptions& options, Session& session) {
  const auto started = std::chrono::steady_clock::now();
  CaseResult r = new_case_result(kc, point, session.backend(), options.seed);
  const std::unique_ptr<CaseInstance> instance = kc.make(point);
  r.distribution = instance->distribution_text();
  if (const std::string why = instance->skip_reason(session.backend()); !why.empty()) {
    r.outcome = Outcome::skipped;
    r.reason = why;
    return r;
  }
  const std::vector<TensorSpec> out_specs = instance->outputs();
  for (const TensorSpec& s : out_specs) r.output_shapes.push_back(s.name + ":" + s.shape_text());

  HostTensors inputs = allocate_host(instance->inputs());
  instance->generate(r.input_seed, inputs);

  // Run: fused and chain under NaN poison, fused again under the other poison.
  RoleRunner runner(*instance, session.backend(), session.stream());
  runner.add_input_set(inputs);
  HostTensors fused = runner.run(Role::fused, Poison::nan);
  HostTensors chain = runner.run(Role::chain, Poison::nan);
  HostTensors rerun = runner.run(Role::fused, Poison::alternate);
  // The elements that carry the claim, as the chain (the reference of the claim) defines them.
  std::vector<Region> regions;
  for (std::size_t i = 0; i < out_specs.size(); ++i) regions.push_back(instance->compared_region(i, chain));
  std::string fault_site;
  if (options.fault == FaultInjection::flip_fused_element) fault_site = inject_fault(fused, rerun, regions);

  // Fused against chain: the claim.
  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    if (kc.claim.kind == Claim::Kind::bitwise)
      r.checks.push_back(bitwise_check("check/chain/bitwise", out_specs[i], fused[i], chain[i], regions[i], "fused", "chain"));
    else
      r.checks.push_back(value_bound_check("check/chain/bound", out_specs[i], fused[i], chain[i], regions[i], kc.claim.bound));
  }
  // Each role against fp64.
  for (const auto& [role, outputs] : {std::pair{"fused", &fused}, std::pair{"chain", &chain}}) {
    for (const Fp64Check& f : instance->check_fp64(inputs, *outputs))
      r.checks.push_back(bound_check(std::string("check/fp64/") + role, f.quantity, f.stats, f.bound));
  }
  // GPU against the CPU emulation, both roles: bitwise for deterministic kernels (semantics
  // section 4), within the claim's bound for those whose order cannot be fixed.
  if (session.backend() == Backend::gpu) {
    RoleRunner emu(*instance, Backend::cpu, nullptr);
    emu.add_input_set(inputs);
    const HostTensors emu_fused = emu.run(Role::fused, Poison::nan);
    const HostTensors emu_chain = emu.run(Role::chain, Poison::nan);
    const bool bitwise = kc.deterministic || kc.claim.kind == Claim::Kind::bitwise;
    for (std::size_t i = 0; i < out_specs.size(); ++i) {
      for (const auto& [id, gpu_out, cpu_out] : {std::tuple{"check/emu/fused", &fused[i], &emu_fused[i]},
                                                 std::tuple{"check/emu/chain", &chain[i], &emu_chain[i]}}) {
        r.checks.push_back(bitwise ? bitwise_check(id, out_specs[i], *gpu_out, *cpu_out, regions[i], "gpu", "cpu")
                                   : value_bound_check(id, out_specs[i], *gpu_out, *cpu_out, regions[i], kc.claim.bound));
      }
    }
  }
  // Repeatability (deterministic kernels), and poison that survived both fused runs.
  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    if (kc.deterministic)
      r.checks.push_back(bitwise_check("check/repeat/fused", out_specs[i], rerun[i], fused[i], regions[i], "rerun", "first"));
    r.checks.push_back(unwritten_check(out_specs[i], fused[i], rerun[i], regions[i]));
  }
  if (every_input_varies(inputs)) {
    for (std::size_t i = 0; i < out_specs.size(); ++i)
      if (auto c = uniform_check(out_specs[i], fused[i], regions[i])) r.checks.push_back(std::move(*c));
  }

  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    r.fingerprints.emplace_back("fused/" + out_specs[i].name, fingerprint_text(fused[i].bytes));
    r.fingerprints.emplace_back("chain/" + out_specs[i].name, fingerprint_text(chain[i].bytes));
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
