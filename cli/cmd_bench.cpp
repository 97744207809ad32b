// fusebench bench: verify, then time every variant of every selected case and point, interleaved;
// report medians, spread, GB/s against the measured copy bandwidth, TFLOP/s against the measured
// matrix rate, and each pair claim's ratio (reference time / variant time).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/run_loop.hpp"
#include "core/bench_runner.hpp"
#include "core/errors.hpp"
#include "reports/console_table.hpp"

namespace fb {
namespace {

struct BenchCliOptions {
  CommonOptions common;
  std::string mode = "graph,cold";
  std::string variants;  // comma-separated; empty: all
  SamplingPolicy sampling;
};

nlohmann::ordered_json sampling_json(const SamplingPolicy& s, const std::string& mode) {
  return {{"mode", mode},
          {"warmup_count", s.warmup_count},
          {"warmup_ms", s.warmup_ms},
          {"min_samples", s.min_samples},
          {"max_samples", s.max_samples},
          {"noise_target_rel_iqr", s.noise_target},
          {"time_cap_ms", s.time_cap_ms},
          {"batch", s.batch},
          {"graph", "R calls captured in one graph, rotating over input sets exceeding L2; replay time / R"},
          {"cold", "L2 flushed before each sample (memset of 2x L2), inputs rotated across sets exceeding L2"},
          {"hot", "same inputs back to back, no flush"},
          {"interleaving", "variants sampled in rounds, a batch each, order rotated per round"},
          {"statistic", "median of per-call device-event times; rel-IQR = (q3 - q1) / median"}};
}

// "graph,cold" -> {graph, cold}; "both" is the older spelling of cold,hot.
std::vector<BenchMode> parse_bench_modes(const std::string& text) {
  if (text == "both") return {BenchMode::cold, BenchMode::hot};
  std::vector<BenchMode> modes;
  for (const std::string& name : split_on(text, ',')) {
    const BenchMode m = bench_mode_from_name(name);
    if (std::find(modes.begin(), modes.end(), m) != modes.end())
      throw InputError("--mode names '" + std::string(bench_mode_name(m)) + "' twice");
    modes.push_back(m);
  }
  return modes;
}

// "exact,fused" -> {"exact", "fused"}; each must name a variant of some selected case (an
// InputError naming the ones there are otherwise), so a typo times nothing silently never.
std::vector<std::string> parse_variants(const std::string& text, const Selection& selection) {
  std::vector<std::string> names;
  if (text.empty()) return names;
  std::vector<std::string> known;
  for (const ScenarioPoint& sp : selection.points)
    for (const VariantSpec& v : sp.kernel->variants)
      if (std::find(known.begin(), known.end(), v.name) == known.end()) known.push_back(v.name);
  for (const std::string& name : split_on(text, ',')) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError("--variants: '" + name + "' is not a variant of the selected cases (" + list + ")");
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// Sampling options that would time nothing, never stop, or compare against NaN: exit 2 up front.
void check_sampling(const SamplingPolicy& s) {
  auto bad = [](const char* option, const std::string& why) { throw InputError(std::string(option) + ": " + why); };
  auto finite_in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (s.warmup_count < 0 || s.warmup_count > 1000000) bad("--warmup-count", "must be in [0, 1000000]");
  if (!finite_in(s.warmup_ms, 0, 3.6e6)) bad("--warmup-ms", "must be a number in [0, 3600000] (ms)");
  if (s.min_samples < 1 || s.min_samples > 1000000) bad("--min-samples", "must be in [1, 1000000]");
  if (s.max_samples < s.min_samples || s.max_samples > 1000000)
    bad("--max-samples", "must be in [--min-samples, 1000000] (--min-samples is " + std::to_string(s.min_samples) + ")");
  if (!finite_in(s.noise_target, 0, 10) || s.noise_target == 0) bad("--noise-target", "must be a number in (0, 10] (rel-IQR)");
  if (!finite_in(s.time_cap_ms, 0, 3.6e6) || s.time_cap_ms == 0) bad("--time-cap-ms", "must be a number in (0, 3600000] (ms)");
}

}  // namespace

Command setup_bench(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  o->common.scenario = "m31-flash-tp4";
  CLI::App* sub = app.add_subcommand("bench", "verify, then time fused against chain (GPU events, or CPU clock)");
  add_common_options(*sub, o->common);
  sub->add_option("--mode", o->mode,
                  "comma-separated timer modes: graph (graph replay, inputs rotated), cold (L2 flush + input "
                  "rotation), hot; 'both' means cold,hot")
      ->capture_default_str();
  sub->add_option("--warmup-count", o->sampling.warmup_count, "warm-up runs, at least")->capture_default_str();
  sub->add_option("--warmup-ms", o->sampling.warmup_ms, "warm-up wall time, at least")->capture_default_str();
  sub->add_option("--min-samples", o->sampling.min_samples, "samples before the noise target may stop sampling")
      ->capture_default_str();
  sub->add_option("--max-samples", o->sampling.max_samples, "sample cap")->capture_default_str();
  sub->add_option("--noise-target", o->sampling.noise_target, "stop when rel-IQR falls to this")->capture_default_str();
  sub->add_option("--time-cap-ms", o->sampling.time_cap_ms, "wall-time cap per variant and mode")->capture_default_str();
  sub->add_option("--variants", o->variants,
                  "comma-separated variants to time (default: all); every variant is still verified, and a "
                  "ratio is reported only where both sides were timed");
  sub->footer(
      "Examples:\n"
      "  fusebench bench --kernel 'fp8_quant/*' --where M=32768,K=6144 --backend gpu --json runs/f9.json\n"
      "  fusebench bench --kernel 'swiglu_fp8/*' --where T=3,d=768 --mode graph --backend gpu\n"
      "  fusebench bench --scenario ci-quick --backend cpu --mode hot\n"
      "  fusebench bench --kernel 'moe_gemm/stage*' --where T=192 --variants exact --backend gpu   (the plain engine verified, not timed)\n"
      "  CUDA_VISIBLE_DEVICES=3 fusebench bench --backend gpu --shard 3/8 --json shard-3.json   (then: fusebench merge)");
  return {sub, [o]() -> int {
            const auto t0 = std::chrono::steady_clock::now();
            check_sampling(o->sampling);
            Registry registry;
            register_all_families(registry);
            const Selection selection = select_points(o->common, registry);
            const std::vector<std::string> variants = parse_variants(o->variants, selection);
            check_report_paths(o->common);
            Session session(o->common.backend);
            check_memory(selection, session);
            RunMetadata meta = start_metadata("bench", o->common, selection, session, command_line());
            meta.methodology["bench"] = sampling_json(o->sampling, o->mode);
            if (!o->common.quiet && !session.fallback_reason().empty())
              std::cout << "note: no usable GPU, timing the CPU emulation (" << session.fallback_reason() << ")\n";
            BenchOptions bench;
            bench.sampling = o->sampling;
            bench.verify = verify_options(o->common);
            bench.modes = parse_bench_modes(o->mode);
            bench.variants = variants;
            if (!bench.variants.empty()) meta.methodology["bench"]["variants_timed"] = bench.variants;
            meta.environment = measure_environment(session, bench);
            const LoopResult loop = run_points(
                "bench", o->common, selection, session.backend(),
                [&](const ScenarioPoint& sp) { return bench_case(*sp.kernel, sp.point, bench, session, *meta.environment); },
                [&](const CaseResult& r) {
                  if (r.outcome != Outcome::pass) std::cout << verify_line(r) << failure_lines(r);
                  else if (!o->common.quiet)
                    std::cout << "timed " << r.case_name << " " << r.point.text() << "\n";
                  std::cout.flush();
                });
            finish_metadata(meta, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            const std::string report_errors = try_write_reports(o->common, meta, loop.results);
            std::cout << bench_table(loop.results, meta) << summary_line(meta, loop.results);
            return final_exit_code(exit_code_for(loop.results, loop.device_failed), report_errors);
          }};
}

}  // namespace fb
