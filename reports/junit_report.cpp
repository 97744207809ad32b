#include "reports/junit_report.hpp"

#include <map>
#include <sstream>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "reports/atomic_write.hpp"
#include "reports/xml_text.hpp"

namespace fb {
namespace {

// Every string pugixml gets passes through xml_safe_text: pugixml escapes markup (<, &, quotes)
// but writes control characters and invalid UTF-8 as they are, which is not well-formed XML.
std::string safe(const std::string& text) { return xml_safe_text(text); }

}  // namespace

std::string junit_xml(const RunMetadata& meta, const std::vector<CaseResult>& results) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = safe(fmt::format("fusebench {} {}", meta.command, meta.scenario_name)).c_str();

  std::map<std::string, std::vector<const CaseResult*>> by_family;
  for (const CaseResult& r : results) by_family[r.family].push_back(&r);
  int total = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& [family, cases] : by_family) {
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = safe(family).c_str();
    int f = 0, e = 0, s = 0;
    double seconds = 0;
    for (const CaseResult* r : cases) {
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = safe(r->case_name).c_str();
      tc.append_attribute("name") = safe(fmt::format("{} [{}]", r->point.text(), backend_name(r->backend))).c_str();
      tc.append_attribute("time") = fmt::format("{:.3f}", r->wall_ms / 1000.0).c_str();
      seconds += r->wall_ms / 1000.0;
      std::ostringstream body;
      for (const CheckResult& c : r->checks)
        body << (c.passed ? "ok   " : (c.mistrusted ? "MISTRUSTED " : "FAIL ")) << c.id << " " << c.message << "\n";
      if (!r->repro.empty()) body << "repro: " << r->repro << "\n";
      switch (r->outcome) {
        case Outcome::pass: break;
        case Outcome::fail:
        case Outcome::mistrusted: {
          auto node = tc.append_child("failure");
          node.append_attribute("message") = safe(fmt::format("{}: {}", outcome_name(r->outcome), r->reason)).c_str();
          node.append_attribute("type") = outcome_name(r->outcome);
          node.text() = safe(body.str()).c_str();
          ++f;
          break;
        }
        case Outcome::error: {
          auto node = tc.append_child("error");
          node.append_attribute("message") = safe(r->reason).c_str();
          node.text() = safe(body.str()).c_str();
          ++e;
          break;
        }
        case Outcome::skipped: tc.append_child("skipped").append_attribute("message") = safe(r->reason).c_str(); ++s; break;
      }
      if (r->outcome == Outcome::pass) tc.append_child("system-out").text() = safe(body.str()).c_str();
    }
    suite.append_attribute("tests") = static_cast<int>(cases.size());
    suite.append_attribute("failures") = f;
    suite.append_attribute("errors") = e;
    suite.append_attribute("skipped") = s;
    suite.append_attribute("time") = fmt::format("{:.3f}", seconds).c_str();
    total += static_cast<int>(cases.size());
    failures += f;
    errors += e;
    skipped += s;
  }
  suites.append_attribute("tests") = total;
  suites.append_attribute("failures") = failures;
  suites.append_attribute("errors") = errors;
  suites.append_attribute("skipped") = skipped;
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

void write_junit_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results) {
  write_file_atomically(path, junit_xml(meta, results));
}

}  // namespace fb
