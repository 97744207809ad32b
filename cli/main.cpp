// fusebench: proves GPU kernel fusions correct and measures what each one is worth.
#include <csignal>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/utf8.hpp"

namespace {

// Arguments are recorded in every report (JSON holds UTF-8 only) and quoted in messages: a byte
// that is not UTF-8 is refused before any work, not after it, when the report cannot be written.
int reject_bad_bytes(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (const std::size_t at = fb::first_invalid_utf8(arg); at != std::string::npos) {
      std::cerr << "fusebench: error: argument " << i << " '" << fb::text_excerpt(arg) << "' is not UTF-8 (byte "
                << at << "); reports record every argument and hold UTF-8 only\n";
      return fb::kExitBadInput;
    }
  }
  return fb::kExitPass;
}

}  // namespace

int main(int argc, char** argv) {
  // `fusebench verify | head`: a closed stdout must not kill the run before its reports are
  // written. Writes to it fail (EPIPE) instead, and the run goes on.
  std::signal(SIGPIPE, SIG_IGN);
  if (const int code = reject_bad_bytes(argc, argv); code != fb::kExitPass) return code;
  fb::set_command_line(argc, argv);
  CLI::App app{"fusebench: proves GPU kernel fusions correct (against their unfused chain and fp64) and measures them"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 all passed; 1 a check failed; 2 bad input or usage; 3 device or runtime error;\n"
      "4 (compare) no regression but some ambiguous verdict.\n"
      "Run 'fusebench <command> --help' for a command's options and examples.");
  const fb::Command commands[] = {fb::setup_list(app), fb::setup_verify(app), fb::setup_bench(app),
                                  fb::setup_compare(app), fb::setup_merge(app), fb::setup_ablate(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? fb::kExitPass : fb::kExitBadInput;
  }
  for (const fb::Command& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return c.run();
    } catch (const fb::InputError& e) {
      std::cerr << "fusebench: error: " << e.what() << "\n";
      return fb::kExitBadInput;
    } catch (const fb::DeviceError& e) {
      std::cerr << "fusebench: device error: " << e.what() << "\n";
      return fb::kExitDeviceError;
    } catch (const std::bad_alloc&) {
      std::cerr << "fusebench: runtime error: out of host memory\n";
      return fb::kExitDeviceError;
    } catch (const std::exception& e) {
      std::cerr << "fusebench: runtime error: " << e.what() << "\n";
      return fb::kExitDeviceError;
    }
  }
  return fb::kExitBadInput;
}
