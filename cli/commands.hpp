// One file per subcommand: each registers its options on the app and returns what to run when it
// was chosen. Runs happen after parsing, outside CLI11, so errors map to exit codes in one place.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fb {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command setup_list(CLI::App& app);
Command setup_verify(CLI::App& app);
Command setup_bench(CLI::App& app);
Command setup_compare(CLI::App& app);
Command setup_merge(CLI::App& app);

// compare --merge and merge --stats: the statistics across reports, printed and written.
int run_merge_stats(const std::vector<std::string>& paths, const std::string& json_path, const std::string& markdown_path);
Command setup_ablate(CLI::App& app);

}  // namespace fb
