// fusebench compare BASE HEAD: what changed between two reports (runs, commits or GPU sets), with
// a FASTER / SLOWER / SAME / AMBIGUOUS verdict per timing; compare --merge A B ...: the mean and
// spread of several reports of one scenario.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_paths.hpp"
#include "core/errors.hpp"
#include "reports/atomic_write.hpp"
#include "reports/report_compare.hpp"
#include "reports/report_stats.hpp"

namespace fb {
namespace {
struct CompareCliOptions {
  std::vector<std::string> reports;
  std::string json_path, markdown_path;
  bool merge = false;
  CompareOptions gates;
};

std::vector<NamedReport> load_all(const std::vector<std::string>& paths) {
  std::vector<NamedReport> out;
  for (const std::string& p : paths) out.push_back(NamedReport{p, load_report(p)});
  return out;
}
}  // namespace

int run_merge_stats(const std::vector<std::string>& paths, const std::string& json_path, const std::string& markdown_path) {
  std::vector<NamedPath> inputs;
  for (const std::string& p : paths) inputs.push_back({"a report", p});
  check_output_paths({{"--json", json_path}, {"--markdown", markdown_path}}, inputs);
  MergeStats s;
  try {
    s = merge_statistics(load_all(paths));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("a report has an unexpected structure: ") + e.what());
  }
  std::cout << s.markdown;
  if (!json_path.empty()) write_file_atomically(json_path, s.json.dump(2) + "\n");
  if (!markdown_path.empty()) write_file_atomically(markdown_path, s.markdown);
  return kExitPass;
}

Command setup_compare(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* sub = app.add_subcommand("compare", "compare two reports: verdicts on every timing, verification changes, output bits");
  sub->add_option("reports", o->reports, "BASE HEAD (the reference, then the report to judge); with --merge, two or more")
      ->required();
  sub->add_flag("--merge", o->merge,
                "summarize several reports of one scenario (GPU sets, machines): per point the mean and spread of "
                "their medians (and of each fusion's share in ablation reports)");
  sub->add_option("--json", o->json_path, "write the comparison as JSON (atomically)");
  sub->add_option("--markdown", o->markdown_path, "write a markdown pull-request comment (atomically)");
  sub->add_option("--alpha", o->gates.thresholds.alpha, "significance level of the two-sided Mann-Whitney U test")
      ->capture_default_str();
  sub->add_option("--min-effect", o->gates.thresholds.min_effect,
                  "smallest change of the median that counts, as a fraction (0.02 = 2 %)")
      ->capture_default_str();
  sub->add_option("--min-samples", o->gates.thresholds.min_samples,
                  "fewer samples than this on either side make the verdict AMBIGUOUS")
      ->capture_default_str();
  sub->add_option("--max-slowdown", o->gates.max_slowdown,
                  "also a regression: the median of a case's first variant timed on both sides grows past this ratio (e.g. 1.05); 0 disables")
      ->capture_default_str();
  sub->add_flag("--fail-on-bit-change", o->gates.fail_on_bit_change, "also a regression: any output's bytes changed");
  sub->footer(
      "Verdicts per timing pair: FASTER/SLOWER when the test is significant (p < alpha) and the median moved past the\n"
      "effect; SAME when not significant and inside it; AMBIGUOUS otherwise (too few samples, significant but small,\n"
      "or large but not significant).\n"
      "Exit: 0 no regression; 1 a regression (a SLOWER verdict, a verification change: pass -> fail, a bitwise claim\n"
      "or check lost, a case gone; or a gate); 4 no regression but some AMBIGUOUS verdict; 2 unreadable reports or\n"
      "reports that cannot be compared (schema version, report kind, scenario).\n"
      "Examples:\n"
      "  fusebench compare reports/runs/old/bench.json build/bench.json --markdown comment.md\n"
      "  fusebench compare base.json head.json --alpha 0.01 --min-effect 0.05 --json diff.json\n"
      "  fusebench compare --merge gpus0-3.json gpus4-7.json --json mean.json");
  return {sub, [o]() -> int {
            check_thresholds(o->gates.thresholds);
            if (o->merge) {
              if (o->reports.size() < 2)
                throw InputError(fmt::format("compare --merge: takes two or more reports, got {}", o->reports.size()));
              return run_merge_stats(o->reports, o->json_path, o->markdown_path);
            }
            if (o->reports.size() != 2)
              throw InputError(fmt::format("compare: takes BASE and HEAD, got {} reports (--merge takes several)",
                                           o->reports.size()));
            check_output_paths({{"--json", o->json_path}, {"--markdown", o->markdown_path}},
                               {{"BASE", o->reports[0]}, {"HEAD", o->reports[1]}});
            Comparison c;
            try {
              const std::vector<NamedReport> reports = load_all(o->reports);
              check_comparable(reports);
              c = compare_reports(reports[0].json, reports[1].json, o->gates);
            } catch (const nlohmann::json::exception& e) {
              throw InputError(std::string("a report has an unexpected structure: ") + e.what());
            }
            std::cout << c.text;
            if (!o->json_path.empty()) write_file_atomically(o->json_path, c.json.dump(2) + "\n");
            if (!o->markdown_path.empty()) write_file_atomically(o->markdown_path, c.markdown);
            return c.regression ? kExitCheckFailed : c.ambiguous ? kExitAmbiguous : kExitPass;
          }};
}

}  // namespace fb
