// The ablation chart: one group of bars per fusion (and all-off), one bar per point, each the
// share in percent with its interval as a whisker. Self-contained SVG (inline styles, no fonts or
// scripts fetched), written with pugixml. Bars carry their numbers as data-* attributes so a test
// (and a reader's script) can check them against the JSON.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "reports/ablation_report.hpp"
#include "reports/atomic_write.hpp"
#include "reports/xml_text.hpp"

namespace fb {
namespace {

const char* kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

struct Bar {
  std::string group, point;
  const AblationShare* share;
};

std::string num(double v) { return fmt::format("{:.3f}", v); }

void attr(pugi::xml_node n, const char* name, const std::string& value) {
  n.append_attribute(name) = xml_safe_text(value).c_str();
}

pugi::xml_node text(pugi::xml_node parent, double x, double y, const std::string& s, const char* anchor = "middle",
                    int size = 11) {
  pugi::xml_node t = parent.append_child("text");
  attr(t, "x", num(x));
  attr(t, "y", num(y));
  attr(t, "text-anchor", anchor);
  attr(t, "font-family", "sans-serif");
  attr(t, "font-size", std::to_string(size));
  t.append_child(pugi::node_pcdata).set_value(xml_safe_text(s).c_str());
  return t;
}

}  // namespace

std::string ablation_svg(const AblationReport& r) {
  // Groups: each fusion timed at some point, then all-off.
  std::vector<std::string> groups;
  for (const AblationPointResult& p : r.points)
    for (const AblationFusionResult& f : p.fusions)
      if (f.share.timed && std::find(groups.begin(), groups.end(), f.fusion) == groups.end()) groups.push_back(f.fusion);
  std::sort(groups.begin(), groups.end());
  groups.push_back("all off");
  auto share_for = [&](const AblationPointResult& p, const std::string& g) -> const AblationShare* {
    if (g == "all off") return p.all_off.timed ? &p.all_off : nullptr;
    for (const AblationFusionResult& f : p.fusions)
      if (f.fusion == g && f.share.timed) return &f.share;
    return nullptr;
  };
  double extent = 1.0;  // percent, at least 1
  for (const AblationPointResult& p : r.points)
    for (const std::string& g : groups)
      if (const AblationShare* s = share_for(p, g))
        extent = std::max({extent, std::fabs(100 * s->share), std::fabs(100 * s->ci_low), std::fabs(100 * s->ci_high)});
  const double bar_w = 14, gap = 18, left = 60, top = 40, plot_h = 320, legend_h = 18.0 * (r.points.size() + 1);
  const double npoints = std::max<double>(1, static_cast<double>(r.points.size()));
  const double group_w = npoints * bar_w + gap;
  const double width = left + group_w * static_cast<double>(groups.size()) + 20;
  const double height = top + plot_h + 40 + legend_h;
  const double scale = (plot_h / 2) / (extent * 1.1);  // px per percent; zero in the middle
  const double zero_y = top + plot_h / 2;

  pugi::xml_document doc;
  pugi::xml_node svg = doc.append_child("svg");
  attr(svg, "xmlns", "http://www.w3.org/2000/svg");
  attr(svg, "width", num(width));
  attr(svg, "height", num(height));
  attr(svg, "viewBox", fmt::format("0 0 {} {}", num(width), num(height)));
  attr(svg, "data-px-per-percent", fmt::format("{:.9g}", scale));
  attr(svg, "data-zero-y", num(zero_y));
  text(svg, width / 2, 18,
       fmt::format("fusebench ablate {}: step growth with each fusion off (%, {:.0f} % interval){}", r.meta.scenario_name,
                   100 * r.methodology.ci_level, r.meta.backend == Backend::cpu ? " - CPU emulation, not a figure" : ""),
       "middle", 13);
  // Axis and grid.
  for (int i = -2; i <= 2; ++i) {
    const double v = extent * 1.1 * i / 2, y = zero_y - v * scale;
    pugi::xml_node line = svg.append_child("line");
    attr(line, "x1", num(left));
    attr(line, "x2", num(width - 10));
    attr(line, "y1", num(y));
    attr(line, "y2", num(y));
    attr(line, "stroke", i == 0 ? "#000" : "#ddd");
    text(svg, left - 6, y + 4, fmt::format("{:+.1f}", v), "end", 10);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double gx = left + gap / 2 + group_w * static_cast<double>(g);
    text(svg, gx + npoints * bar_w / 2, top + plot_h + 16, groups[g]);
    for (std::size_t pi = 0; pi < r.points.size(); ++pi) {
      const AblationPointResult& p = r.points[pi];
      const AblationShare* s = share_for(p, groups[g]);
      if (!s) continue;
      const double v = 100 * s->share, x = gx + bar_w * static_cast<double>(pi);
      const double h = std::fabs(v) * scale;
      pugi::xml_node rect = svg.append_child("rect");
      attr(rect, "class", "bar");
      attr(rect, "data-fusion", groups[g]);
      attr(rect, "data-point", p.id);
      attr(rect, "data-value", fmt::format("{:.9g}", v));
      attr(rect, "data-ci-low", fmt::format("{:.9g}", 100 * s->ci_low));
      attr(rect, "data-ci-high", fmt::format("{:.9g}", 100 * s->ci_high));
      attr(rect, "data-significant", s->significant ? "true" : "false");
      attr(rect, "x", num(x));
      attr(rect, "y", num(v >= 0 ? zero_y - h : zero_y));
      attr(rect, "width", num(bar_w - 2));
      attr(rect, "height", fmt::format("{:.9g}", h));
      attr(rect, "fill", kColours[pi % 8]);
      attr(rect, "fill-opacity", s->significant ? "1" : "0.35");
      pugi::xml_node title = rect.append_child("title");
      title.append_child(pugi::node_pcdata)
          .set_value(xml_safe_text(fmt::format("{} at {}: {}", groups[g], p.id, share_cell(*s))).c_str());
      pugi::xml_node whisker = svg.append_child("line");
      attr(whisker, "class", "ci");
      attr(whisker, "x1", num(x + bar_w / 2 - 1));
      attr(whisker, "x2", num(x + bar_w / 2 - 1));
      attr(whisker, "y1", num(zero_y - 100 * s->ci_low * scale));
      attr(whisker, "y2", num(zero_y - 100 * s->ci_high * scale));
      attr(whisker, "stroke", "#222");
    }
  }
  // Legend: one colour per point; faded bars are not significant.
  double ly = top + plot_h + 36;
  for (std::size_t pi = 0; pi < r.points.size(); ++pi, ly += 18) {
    pugi::xml_node sw = svg.append_child("rect");
    attr(sw, "x", num(left));
    attr(sw, "y", num(ly - 10));
    attr(sw, "width", "12");
    attr(sw, "height", "12");
    attr(sw, "fill", kColours[pi % 8]);
    text(svg, left + 18, ly, point_heading(r.points[pi]), "start");
  }
  text(svg, left, ly, "faded: not significant (the interval contains 0); whiskers: the interval", "start", 10);
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

void write_ablation_svg(const std::string& path, const AblationReport& report) {
  write_file_atomically(path, ablation_svg(report));
}

}  // namespace fb
