// fusebench merge SHARD.json ... -o OUT.json: the reports of one run's shards (--shard I/N) joined
// into the report the unsharded run writes (reports/report_merge.hpp says how); merge --stats:
// the mean and spread of several reports of one scenario (as compare --merge).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_paths.hpp"
#include "core/errors.hpp"
#include "reports/atomic_write.hpp"
#include "reports/report_merge.hpp"

namespace fb {
namespace {
struct MergeCliOptions {
  std::vector<std::string> reports;
  std::string output, json_path, markdown_path;
  bool stats = false;
};
}  // namespace

Command setup_merge(CLI::App& app) {
  auto o = std::make_shared<MergeCliOptions>();
  CLI::App* sub = app.add_subcommand("merge", "join the shard reports of one run into one report (or --stats across GPU sets)");
  sub->add_option("reports", o->reports, "the shard reports (each shard of the run once), or with --stats two or more reports")
      ->required();
  sub->add_option("-o,--output", o->output, "the merged report (atomically); required without --stats");
  sub->add_flag("--stats", o->stats, "mean and spread per point across reports of one scenario (as compare --merge)");
  sub->add_option("--json", o->json_path, "with --stats: write the statistics as JSON");
  sub->add_option("--markdown", o->markdown_path, "with --stats: write the statistics as markdown");
  sub->footer(
      "Shards must be one run: the same scenario, seed, filters, methodology, backend, build and schema, each shard\n"
      "exactly once and complete; otherwise exit 2 naming the file and the field.\n"
      "Examples:\n"
      "  fusebench merge shard-0.json shard-1.json shard-2.json -o verify.json\n"
      "  fusebench merge --stats gpus0-3.json gpus4-7.json --markdown mean.md");
  return {sub, [o]() -> int {
            if (o->stats) {
              if (!o->output.empty()) throw InputError("merge --stats: writes --json and --markdown, not -o");
              return run_merge_stats(o->reports, o->json_path, o->markdown_path);
            }
            if (o->output.empty()) throw InputError("merge: -o OUT.json is required (or --stats)");
            if (!o->json_path.empty() || !o->markdown_path.empty())
              throw InputError("merge: --json and --markdown go with --stats; the merged report is -o");
            std::vector<NamedPath> inputs;
            for (const std::string& p : o->reports) inputs.push_back({"a shard report", p});
            check_output_paths({{"-o", o->output}}, inputs);
            std::vector<NamedReport> shards;
            nlohmann::ordered_json merged;
            try {
              for (const std::string& p : o->reports) shards.push_back(NamedReport{p, load_report(p)});
              merged = merge_shard_reports(shards);
            } catch (const nlohmann::json::exception& e) {
              throw InputError(std::string("a shard report has an unexpected structure: ") + e.what());
            }
            write_file_atomically(o->output, merged.dump(2) + "\n");
            const char* units = merged.contains("points") && !merged.contains("cases") ? "points" : "cases";
            std::cout << fmt::format("fusebench merge: {} shards, {} {} in the unsharded order -> {}\n", shards.size(),
                                     merged[units].size(), units, o->output);
            return kExitPass;
          }};
}

}  // namespace fb
