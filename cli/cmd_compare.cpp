// fusebench compare BASE HEAD: what changed between two reports (runs, commits or GPU sets).
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_paths.hpp"
#include "core/errors.hpp"
#include "reports/atomic_write.hpp"
#include "reports/report_compare.hpp"

namespace fb {
namespace {
struct CompareCliOptions {
  std::string base, head, json_path;
  CompareOptions gates;
};
}  // namespace

Command setup_compare(CLI::App& app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* sub = app.add_subcommand("compare", "compare two JSON reports: outcomes, output bits, time ratios");
  sub->add_option("base", o->base, "the reference report")->required();
  sub->add_option("head", o->head, "the report to judge")->required();
  sub->add_option("--json", o->json_path, "write the comparison as JSON (atomically)");
  sub->add_option("--max-slowdown", o->gates.max_slowdown,
                  "exit 1 when a fused median grows past this ratio (e.g. 1.05); 0 disables")
      ->capture_default_str();
  sub->add_flag("--fail-on-bit-change", o->gates.fail_on_bit_change, "exit 1 when any output's bytes changed");
  sub->footer(
      "Exit: 0 no regression; 1 an outcome got worse, a case vanished or a gate tripped; 2 unreadable report.\n"
      "Examples:\n"
      "  fusebench compare reports/runs/old/bench.json build/bench.json --max-slowdown 1.05\n"
      "  fusebench compare base.json head.json --fail-on-bit-change --json diff.json");
  return {sub, [o]() -> int {
            check_output_paths({{"--json", o->json_path}}, {{"BASE", o->base}, {"HEAD", o->head}});
            Comparison c;
            try {
              c = compare_reports(load_report(o->base), load_report(o->head), o->gates);
            } catch (const nlohmann::json::exception& e) {
              throw InputError(std::string("a report has an unexpected structure: ") + e.what());
            }
            std::cout << c.text;
            if (!o->json_path.empty()) write_file_atomically(o->json_path, c.json.dump(2) + "\n");
            return c.regression ? kExitCheckFailed : kExitPass;
          }};
}

}  // namespace fb
