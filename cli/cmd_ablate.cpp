// fusebench ablate: the scenario's MoE layer step with each fusion off alone (and all off), checked
// against all-on before anything is timed, then timed as a serving engine runs it; shares with
// paired-bootstrap intervals, modelled MoE time per step, JSON / markdown / SVG reports.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_paths.hpp"
#include "core/errors.hpp"
#include "core/shard.hpp"
#include "layer/ablation_runner.hpp"
#include "layer/ablation_stats.hpp"
#include "reports/ablation_report.hpp"

namespace fb {
namespace {

inline constexpr std::int64_t kCpuExpertElementLimit = std::int64_t{1} << 26;

struct AblateCliOptions {
  std::string scenario = "m31-flash-tp4";
  std::string backend = "auto";
  std::string points;
  std::string where;
  std::string fusions;
  int rounds = 0;
  double time_cap_ms = 120000;
  std::uint64_t seed = 1;
  std::string shard = "0/1";
  std::string json_path, markdown_path, svg_path;
  bool quiet = false;
  std::string fault;  // testing only: a configuration whose moe_out gets one flipped bit before its check
};

std::vector<Fusion> parse_fusions(const std::string& text) {
  if (text.empty()) return all_fusions();
  std::vector<Fusion> out;
  for (const std::string& item : split_on(text, ',')) {
    const Fusion f = parse_fusion(item);
    if (std::find(out.begin(), out.end(), f) != out.end())
      throw InputError(std::string("--fusions: ") + fusion_id(f) + " is named twice");
    out.push_back(f);
  }
  return out;
}

// --where rows=3|24,phase=decode on the ablation points.
bool where_matches(const AblationPointSpec& p, const std::map<std::string, std::string>& where) {
  for (const auto& [axis, values] : where) {
    const std::string have = axis == "rows" ? std::to_string(p.rows)
                             : axis == "phase" ? std::string(phase_name(p.phase))
                                               : std::to_string(p.requests);
    const std::vector<std::string> alternatives = split_on(values, '|');
    if (std::find(alternatives.begin(), alternatives.end(), have) == alternatives.end()) return false;
  }
  return true;
}

std::vector<AblationPointSpec> select(const AblationSection& section, const AblateCliOptions& o, const Shard& shard) {
  const std::vector<AblationPointSpec> all = ablation_points(section);
  std::map<std::string, std::string> where;
  if (!o.where.empty()) {
    where = parse_where(o.where);
    for (const auto& [axis, v] : where)
      if (axis != "rows" && axis != "phase" && axis != "requests")
        throw InputError("--where: ablate's points have rows, phase and requests, not '" + axis.substr(0, 40) + "'");
  }
  std::set<std::string> wanted;
  if (!o.points.empty())
    for (const std::string& id : split_on(o.points, ',')) {
      if (std::none_of(all.begin(), all.end(), [&](const AblationPointSpec& p) { return p.id == id; })) {
        std::string ids;
        for (const AblationPointSpec& p : all) ids += (ids.empty() ? "" : ", ") + p.id;
        throw InputError("--points: '" + id.substr(0, 60) + "' is not a point of the scenario (points: " + ids + ")");
      }
      wanted.insert(id);
    }
  std::vector<AblationPointSpec> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!wanted.empty() && !wanted.count(all[i].id)) continue;
    if (!where_matches(all[i], where)) continue;
    if (!shard.contains(static_cast<std::int64_t>(i))) continue;
    out.push_back(all[i]);
  }
  if (out.empty() && !shard.active()) throw InputError("no ablation point matches --points / --where");
  return out;
}

}  // namespace

Command setup_ablate(CLI::App& app) {
  auto o = std::make_shared<AblateCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "ablate", "the MoE layer step with each fusion off alone: checked, then timed; shares with intervals");
  sub->add_option("--scenario", o->scenario, "scenario name or path (needs an \"ablation\" section)")->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu | gpu | auto")->capture_default_str();
  sub->add_option("--points", o->points, "comma-separated point ids, e.g. 'decode M=3,prefill T=32768'");
  sub->add_option("--where", o->where, "point filter on rows, phase, requests: rows=3|24, phase=decode");
  sub->add_option("--fusions", o->fusions, "comma-separated fusions to toggle (default: F1..F8)");
  sub->add_option("--rounds", o->rounds, "timed rounds per point (0: the scenario's, ~30 decode, ~10 prefill)")
      ->capture_default_str();
  sub->add_option("--time-cap-ms", o->time_cap_ms, "per point: stop the rounds past this (at least 3 rounds)")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the weights, inputs and bootstrap")->capture_default_str();
  sub->add_option("--shard", o->shard, "I/N: run the points whose position p has p mod N = I")->capture_default_str();
  sub->add_option("--json", o->json_path, "write the ablation report (schema reports/schema/ablation.schema.json)");
  sub->add_option("--markdown", o->markdown_path, "write the table (rows = fusions, columns = points)");
  sub->add_option("--svg", o->svg_path, "write the bar chart of the shares with their intervals");
  sub->add_flag("-q,--quiet", o->quiet, "print only the summary");
  sub->add_option("--fault-injection", o->fault, "(testing) flip a bit of this configuration's output, e.g. F2_off")
      ->group("");
  sub->footer(
      "Examples:\n"
      "  fusebench ablate --backend gpu --json runs/ablate.json --markdown runs/ablate.md --svg runs/ablate.svg\n"
      "  fusebench ablate --where phase=decode --fusions F1,F4,F6 --rounds 50\n"
      "  fusebench ablate --points 'prefill T=32768' --shard 0/2\n"
      "  fusebench ablate --scenario ci-quick --backend cpu --rounds 3   (CPU smoke test)\n"
      "Exit codes: 0 every check passed; 1 a check failed (nothing timed at that point); 2 bad input; 3 device error.\n"
      "Attention is not modelled: the MoE-layer share of TPOT is 'modelled, MoE layers only'.");
  return {sub, [o]() -> int {
            const auto t0 = std::chrono::steady_clock::now();
            const Shard shard = parse_shard(o->shard);
            const std::vector<Fusion> fusions = parse_fusions(o->fusions);
            if (o->rounds != 0 && (o->rounds < 3 || o->rounds > 100000))  // a paired interval needs a few rounds
              throw InputError("--rounds: must be 0 (the scenario's) or in [3, 100000]");
            if (!(o->time_cap_ms > 0 && o->time_cap_ms <= 3.6e7))
              throw InputError("--time-cap-ms: must be a number in (0, 36000000] (ms)");
            Registry registry;
            register_all_families(registry);
            Selection selection;
            selection.scenario = load_scenario(o->scenario, registry);
            if (!selection.scenario.ablation)
              throw InputError(selection.scenario.path + ": ablation: missing (ablate needs the layer and its points)");
            const AblationSection& section = *selection.scenario.ablation;
            const std::vector<AblationPointSpec> points = select(section, *o, shard);
            check_output_paths({{"--json", o->json_path}, {"--markdown", o->markdown_path}, {"--svg", o->svg_path}},
                               {{"the scenario file", selection.scenario.path}});
            if (o->fault.size() > 0 && o->fault != "none" && o->fault != "all_off" &&
                !(o->fault.size() == 6 && o->fault.substr(2) == "_off"))
              throw InputError("--fault-injection: '" + o->fault.substr(0, 40) + "' is not a configuration name (F2_off, all_off)");
            Session session(o->backend);
            CommonOptions common;
            common.scenario = o->scenario;
            common.backend = o->backend;
            common.seed = o->seed;
            AblationReport report;
            report.meta = start_metadata("ablate", common, selection, session, command_line());
            if (!o->quiet && !session.fallback_reason().empty())
              std::cout << "note: no usable GPU, timing the CPU emulation (" << session.fallback_reason() << ")\n";
            AblationMethodology& m = report.methodology;
            m.seed = o->seed;
            m.timing = session.backend() == Backend::cpu ? "cpu wall clock"
                                                         : "graph replay (decode), device events (prefill)";
            m.decode_rounds = o->rounds > 0 ? o->rounds : section.decode_rounds;
            m.prefill_rounds = o->rounds > 0 ? o->rounds : section.prefill_rounds;
            m.ci_method = fmt::format("seeded percentile bootstrap over rounds ({} resamples) of the median of off_r / on_r - 1",
                                      kBootstrapResamples);
            m.shard = shard.text();
            m.time_cap_ms = o->time_cap_ms;
            m.bootstrap_resamples = kBootstrapResamples;
            AblationRunOptions run;
            run.fusions = fusions;
            run.rounds = o->rounds;
            run.time_cap_ms = o->time_cap_ms;
            run.seed = o->seed;
            run.fault_config = o->fault == "none" ? "" : o->fault;
            if (session.backend() == Backend::cpu) run.warmup = 1;  // a smoke test: the emulation has no caches to warm
            m.replays_per_sample = run.replays_per_sample;
            report.model.moe_layers = section.moe_layers;
            report.model.dense_layers = section.dense_layers;
            report.model.attention_per_layer_us = section.constants.attention_per_layer_us;
            report.model.dense_layer_us = section.constants.dense_layer_us;
            report.model.lm_head_us = section.constants.lm_head_us;
            report.model.note =
                "Attention is not modelled: the step is one MoE layer (post-attention norm, router, shared expert, "
                "routed experts) at per-rank TP4 shapes on one GPU, no all-reduce; prefill adds the qkv and o_proj "
                "block-fp8 GEMMs, with o_proj reading a fixed fp8 tensor in place of attention's output. "
                "MoE ms per step = moe_layers x the all-on step (modelled, MoE layers only)" +
                std::string(section.constants.complete()
                                ? "; modelled TPOT adds the scenario's measured per-layer constants (attention, dense "
                                  "layers, LM head)."
                                : "; the scenario gives no per-layer constants, so no modelled TPOT.");
            const bool terminal = isatty(STDERR_FILENO) != 0 && !o->quiet;
            bool device_failed = false;
            for (std::size_t i = 0; i < points.size() && !device_failed; ++i) {
              const AblationPointSpec& p = points[i];
              if (terminal)
                run.progress = [&, i](const std::string& line) {
                  std::cerr << fmt::format("\rablate: point {}/{}: {}   ", i + 1, points.size(), line) << std::flush;
                };
              // Like verify's moe_gemm cases, the CPU leaves the model-size experts to the GPU: emulating
              // 128 experts' MXFP4 GEMMs per configuration and round would take hours.
              const std::int64_t expert_elements = section.layer.experts * 2 * section.layer.moe_inter * section.layer.hidden;
              if (session.backend() == Backend::cpu && expert_elements > kCpuExpertElementLimit) {
                AblationPointResult r;
                r.id = p.id;
                r.phase = phase_name(p.phase);
                r.rows = p.rows;
                r.requests = p.requests;
                r.skipped = fmt::format("GPU only: {} routed-expert weight elements pass the CPU emulation's 2^26", expert_elements);
                report.points.push_back(r);
                if (!o->quiet) std::cout << p.id << ": skipped (" << r.skipped << ")\n";
                continue;
              }
              try {
                report.points.push_back(run_ablation_point(section, p, run, session.backend(), session.stream()));
              } catch (const DeviceError& e) {
                AblationPointResult r;
                r.id = p.id;
                r.phase = phase_name(p.phase);
                r.rows = p.rows;
                r.requests = p.requests;
                r.error = e.what();
                report.points.push_back(r);
                device_failed = true;
              }
              if (terminal) std::cerr << "\n";
              if (!o->quiet) {
                const AblationPointResult& r = report.points.back();
                std::cout << fmt::format("{}: {} checks, {} failed{}\n", r.id, r.checks(), r.checks_failed(),
                                         r.error.empty() ? "" : ", device error: " + r.error);
                std::cout.flush();
              }
            }
            finish_metadata(report.meta, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            std::string errors;
            auto attempt = [&](const std::string& path, void (*write)(const std::string&, const AblationReport&)) {
              if (path.empty()) return;
              try {
                write(path, report);
              } catch (const std::exception& e) {
                errors += fmt::format("fusebench: error: {}\n", e.what());
              }
            };
            attempt(o->json_path, write_ablation_json);
            attempt(o->markdown_path, write_ablation_markdown);
            attempt(o->svg_path, write_ablation_svg);
            int checks = 0, failed = 0;
            for (const AblationPointResult& r : report.points) {
              checks += r.checks();
              failed += r.checks_failed();
            }
            std::cout << ablation_console(report);
            std::cout << fmt::format("ablate: {} points, {} checks, {} failed, backend {}{}\n", report.points.size(), checks,
                                     failed, backend_name(session.backend()),
                                     session.backend() == Backend::cpu ? " (CPU wall clock: a smoke test, not a figure)" : "");
            const int code = device_failed ? kExitDeviceError : failed > 0 ? kExitCheckFailed : kExitPass;
            return final_exit_code(code, errors);
          }};
}

}  // namespace fb
