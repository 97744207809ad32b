// fusebench verify: check every selected case and point (fused vs chain vs fp64, GPU vs CPU
// emulation, repeatability), print one line each, write the reports, exit 0/1/2/3.
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/run_loop.hpp"
#include "reports/console_table.hpp"

namespace fb {

Command setup_verify(CLI::App& app) {
  auto options = std::make_shared<CommonOptions>();
  CLI::App* sub = app.add_subcommand("verify", "check fusions against their chain, fp64 and the CPU emulation");
  add_common_options(*sub, *options);
  sub->footer(
      "Examples:\n"
      "  fusebench verify --scenario ci-quick --backend cpu\n"
      "  fusebench verify --kernel 'fp8_quant/*' --where M=32768,K=6144 --backend gpu --json run.json\n"
      "  fusebench verify --scenario scenarios/m31-flash-tp4.json --junit results.xml -q\n"
      "  fusebench verify --scenario ci-quick --backend cpu --shard 1/4 --json shard-1.json   (then: fusebench merge)");
  return {sub, [options]() -> int {
            const auto t0 = std::chrono::steady_clock::now();
            Registry registry;
            register_all_families(registry);
            const Selection selection = select_points(*options, registry);
            check_report_paths(*options);
            Session session(options->backend);
            check_memory(selection, session);
            RunMetadata meta = start_metadata("verify", *options, selection, session, command_line());
            if (!options->quiet && !session.fallback_reason().empty())
              std::cout << "note: no usable GPU, verifying on the CPU emulation (" << session.fallback_reason() << ")\n";
            const VerifyOptions verify = verify_options(*options);
            const LoopResult loop = run_points(
                "verify", *options, selection, session.backend(),
                [&](const ScenarioPoint& sp) { return verify_case(*sp.kernel, sp.point, verify, session); },
                [&](const CaseResult& r) {
                  if (!options->quiet || r.outcome != Outcome::pass) std::cout << verify_line(r) << failure_lines(r);
                  std::cout.flush();
                });
            finish_metadata(meta, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            const std::string report_errors = try_write_reports(*options, meta, loop.results);
            std::cout << summary_line(meta, loop.results);
            return final_exit_code(exit_code_for(loop.results, loop.device_failed), report_errors);
          }};
}

}  // namespace fb
