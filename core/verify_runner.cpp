#include "core/verify_runner.hpp"

#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fingerprint.hpp"
#include "core/inputs.hpp"
#include "core/role_runner.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

std::string coords_text(const TensorSpec& spec, const std::vector<std::int64_t>& coords) {
  std::string s;
  for (std::size_t d = 0; d < coords.size() && d < spec.dims.size(); ++d)
    s += fmt::format("[{}={}]", spec.dims[d].name, coords[d]);
  return s;
}

CheckResult bitwise_check(const std::string& id, const TensorSpec& spec, const HostTensor& got,
                          const HostTensor& want, const std::vector<ElementRange>& region, const char* got_label,
                          const char* want_label) {
  const auto extents = spec.extents();
  const BitwiseResult b = compare_bitwise(spec.dtype, got.bytes, want.bytes, extents, region);
  CheckResult c;
  c.id = id;
  c.subject = spec.name;
  c.passed = b.equal;
  c.details["compared"] = b.compared;
  c.details["mismatches"] = b.mismatches;
  c.details["nan"] = b.nan;
  if (b.equal) {
    c.message = fmt::format("{}: {} elements bitwise equal", spec.name, b.compared);
  } else {
    const ElementMismatch& m = *b.first;
    c.message = fmt::format("{}: {} of {} elements differ ({} NaN); first at {} (index {}): {} {} vs {} {}", spec.name,
                            b.mismatches, b.compared, b.nan, coords_text(spec, m.coords), m.index, got_label, m.got,
                            want_label, m.want);
    c.details["first_mismatch"] = Json{{"index", m.index}, {"coords", m.coords}, {got_label, m.got}, {want_label, m.want}};
  }
  return c;
}

double metric_value(const ErrorStats& s, const std::string& metric) {
  if (metric == "err/ulp/max") return static_cast<double>(s.ulp_max);
  if (metric == "err/ulp/p99") return static_cast<double>(s.ulp_p99);
  if (metric == "err/abs/max") return s.abs_max;
  if (metric == "err/rel/max") return s.rel_max;
  if (metric == "err/rmse") return s.rmse;
  if (metric == "err/rel_l2") return s.rel_l2;
  throw std::logic_error("unknown metric " + metric);
}

Json stats_json(const ErrorStats& s) {
  Json j;
  j["count/elements"] = s.elements;
  j["count/nan"] = s.nan;
  j["count/inf"] = s.inf;
  j["err/abs/max"] = s.abs_max;
  j["err/rel/max"] = s.rel_max;
  j["err/rmse"] = s.rmse;
  j["err/rel_l2"] = s.rel_l2;
  if (s.has_ulp) {
    j["err/ulp/max"] = s.ulp_max;
    j["err/ulp/p99"] = s.ulp_p99;
  }
  j["worst_index"] = s.worst_index;
  return j;
}

CheckResult bound_check(const std::string& id, const std::string& subject, const ErrorStats& stats,
                        const Bound& bound) {
  CheckResult c;
  c.id = id;
  c.subject = subject;
  const double value = metric_value(stats, bound.metric);
  c.passed = stats.nan == 0 && stats.inf == 0 && value <= bound.limit;
  c.details["metrics"] = stats_json(stats);
  c.details["bound"] = Json{{"metric", bound.metric}, {"limit", bound.limit}, {"reason", bound.reason}};
  c.details["margin"] = bound.limit - value;
  if (stats.nan || stats.inf) {
    c.message = fmt::format("{}: {} NaN and {} inf elements (NaN never passes)", subject, stats.nan, stats.inf);
  } else {
    c.message = fmt::format("{}: {} {:.6g} {} {:g} (margin {:.3g})", subject, bound.metric, value,
                            c.passed ? "<=" : ">", bound.limit, bound.limit - value);
  }
  return c;
}

// Fused against chain for a case whose claim is a bound (not bitwise): decode both, measure.
CheckResult chain_bound_check(const TensorSpec& spec, const HostTensor& fused, const HostTensor& chain,
                              const Bound& bound) {
  ErrorAccumulator acc;
  const std::size_t width = dtype_size(spec.dtype);
  const std::int64_t n = spec.elements();
  for (std::int64_t i = 0; i < n; ++i)
    acc.add(i, element_value(spec.dtype, fused.bytes.data() + i * width),
            element_value(spec.dtype, chain.bytes.data() + i * width));
  return bound_check("check/chain/bound", spec.name, acc.finish(), bound);
}

// An output that is one repeated value although the inputs vary is not evidence of anything.
bool uniform_bytes(const HostTensor& t) {
  const std::size_t width = dtype_size(t.spec.dtype);
  if (t.spec.elements() < 64 || t.spec.constant_ok) return false;
  for (std::size_t i = width; i < t.bytes.size(); i += width)
    if (std::memcmp(t.bytes.data(), t.bytes.data() + i, width) != 0) return false;
  return true;
}

// Every input holds at least two different values. A uniform output is only suspicious then: an
// all-zero activation legitimately quantizes to zeros whatever the routing ids next to it hold.
bool every_input_varies(const HostTensors& inputs) {
  for (const HostTensor& t : inputs) {
    const std::size_t width = dtype_size(t.spec.dtype);
    bool varies = t.bytes.size() <= width;
    for (std::size_t i = width; i < t.bytes.size() && !varies; i += width)
      varies = std::memcmp(t.bytes.data(), t.bytes.data() + i, width) != 0;
    if (!varies) return false;
  }
  return true;
}

void inject_fault(HostTensors& outputs) {
  HostTensor& t = outputs.front();
  const std::size_t width = dtype_size(t.spec.dtype);
  const std::size_t index = static_cast<std::size_t>(t.spec.elements() / 2);
  t.bytes[index * width] ^= 0x01;  // low bit of the middle element
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
  HostTensors repeat = runner.run(Role::fused, Poison::alternate);
  if (options.fault == FaultInjection::flip_fused_element) {
    inject_fault(fused);
    inject_fault(repeat);
  }

  // Fused against chain.
  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    const auto region = instance->compared_region(i, chain);
    if (kc.claim.kind == Claim::Kind::bitwise)
      r.checks.push_back(bitwise_check("check/chain/bitwise", out_specs[i], fused[i], chain[i], region, "fused", "chain"));
    else
      r.checks.push_back(chain_bound_check(out_specs[i], fused[i], chain[i], kc.claim.bound));
  }
  // Each role against fp64.
  for (const auto& [role, outputs] : {std::pair{"fused", &fused}, std::pair{"chain", &chain}}) {
    for (const Fp64Check& f : instance->check_fp64(inputs, *outputs))
      r.checks.push_back(bound_check(std::string("check/fp64/") + role, f.quantity, f.stats, f.bound));
  }
  // GPU against the CPU emulation, both roles.
  if (session.backend() == Backend::gpu) {
    RoleRunner emu(*instance, Backend::cpu, nullptr);
    emu.add_input_set(inputs);
    const HostTensors emu_fused = emu.run(Role::fused, Poison::nan);
    const HostTensors emu_chain = emu.run(Role::chain, Poison::nan);
    for (std::size_t i = 0; i < out_specs.size(); ++i) {
      const auto region = instance->compared_region(i, emu_chain);
      r.checks.push_back(bitwise_check("check/emu/fused", out_specs[i], fused[i], emu_fused[i], region, "gpu", "cpu"));
      r.checks.push_back(bitwise_check("check/emu/chain", out_specs[i], chain[i], emu_chain[i], region, "gpu", "cpu"));
    }
  }
  // Repeatability, and poison that survived.
  if (kc.deterministic) {
    for (std::size_t i = 0; i < out_specs.size(); ++i) {
      const auto region = instance->compared_region(i, fused);
      CheckResult c = bitwise_check("check/repeat/fused", out_specs[i], repeat[i], fused[i], region, "rerun", "first");
      if (!c.passed) {
        // Bytes that follow the poison pattern were never written: the evidence is not trustworthy.
        const auto& m = c.details["first_mismatch"];
        const std::size_t width = dtype_size(out_specs[i].dtype);
        const std::int64_t idx = m["index"].get<std::int64_t>();
        bool follows_poison = true;
        for (std::size_t b = 0; b < width; ++b) {
          follows_poison &= repeat[i].bytes[idx * width + b] == poison_byte(out_specs[i].dtype, Poison::alternate);
          follows_poison &= fused[i].bytes[idx * width + b] == poison_byte(out_specs[i].dtype, Poison::nan);
        }
        if (follows_poison) {
          c.mistrusted = true;
          c.message = "poison survived (element never written): " + c.message;
        }
      }
      r.checks.push_back(std::move(c));
    }
  }
  const bool varied = every_input_varies(inputs);
  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    if (varied && uniform_bytes(fused[i])) {
      CheckResult c;
      c.id = "check/trust/uniform";
      c.subject = out_specs[i].name;
      c.mistrusted = true;
      c.message = fmt::format("{}: every element is {} although every input varies", out_specs[i].name,
                              element_text(out_specs[i].dtype, fused[i].bytes.data()));
      r.checks.push_back(std::move(c));
    }
  }

  for (std::size_t i = 0; i < out_specs.size(); ++i) {
    r.fingerprints.emplace_back("fused/" + out_specs[i].name, fingerprint_text(fused[i].bytes));
    r.fingerprints.emplace_back("chain/" + out_specs[i].name, fingerprint_text(chain[i].bytes));
  }
  settle_outcome(r);
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace fb
