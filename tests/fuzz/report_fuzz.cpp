// libFuzzer target: the report reader of `fusebench compare` and `merge` on any bytes, then the
// comparison of what it accepted with itself and with a real report, its merge as a one-shard run
// and its statistics with the real report. The CLI turns InputError and nlohmann's
// exceptions into exit 2; a crash, a sanitizer report or any other exception is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "reports/report_compare.hpp"
#include "reports/report_merge.hpp"
#include "reports/report_stats.hpp"

namespace {

// load_report reads a path: the input goes through one temporary file, rewritten each time.
const std::string& scratch_path() {
  static const std::string path = [] {
    char name[] = "/tmp/fusebench-report-fuzz-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::close(fd);
    return std::string(name);
  }();
  return path;
}

const nlohmann::ordered_json* reference_report() {
  static const nlohmann::ordered_json* report = []() -> const nlohmann::ordered_json* {
    try {
      return new nlohmann::ordered_json(fb::load_report(FUSEBENCH_REFERENCE_REPORT));
    } catch (const std::exception&) {
      return nullptr;  // the reference no longer loads (schema change): fuzz the reader alone
    }
  }();
  return report;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const nlohmann::ordered_json report = fb::load_report(scratch_path());
    fb::CompareOptions options;
    options.max_slowdown = 1.05;
    options.fail_on_bit_change = true;
    (void)fb::compare_reports(report, report, options);
    (void)fb::merge_shard_reports({{"fuzz", report}});
    if (const auto* reference = reference_report()) {
      (void)fb::compare_reports(*reference, report, options);
      (void)fb::compare_reports(report, *reference, options);
      (void)fb::merge_statistics({{"reference", *reference}, {"fuzz", report}});
    }
  } catch (const fb::InputError&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
