// The registry: globbing by case or family name, duplicate names rejected, axes validated.
#include <gtest/gtest.h>

#include <set>

#include "core/registry.hpp"
#include "support/test_family.hpp"

namespace fb {
namespace {

TEST(Registry, GlobMatchesCaseAndFamilyNames) {
  EXPECT_TRUE(glob_match("fp8_quant/*", "fp8_quant/per_token"));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("fp8_quant/per_?x128", "fp8_quant/per_1x128"));
  EXPECT_FALSE(glob_match("fp8_quant", "fp8_quant/per_token"));
  EXPECT_TRUE(glob_match("*/per_1x128", "fp8_quant/per_1x128"));
  Registry r;
  register_all_families(r);
  EXPECT_EQ(r.match("fp8_quant").size(), 2u);  // the family name selects its cases
  EXPECT_EQ(r.match("fp8_quant/per_token").size(), 1u);
  EXPECT_TRUE(r.match("nosuch").empty());
}

TEST(Registry, RejectsDuplicateNames) {
  Registry r;
  r.add(testing::doubling_case(testing::Fault::none));
  EXPECT_THROW(r.add(testing::doubling_case(testing::Fault::none)), std::logic_error);
}

TEST(Registry, EveryRegisteredCaseIsComplete) {
  Registry r;
  register_all_families(r);
  ASSERT_FALSE(r.cases().empty());
  for (const KernelCase& c : r.cases()) {
    EXPECT_TRUE(c.name.starts_with(c.family + "/")) << c.name;
    EXPECT_FALSE(c.fusion.empty()) << c.name;
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_FALSE(c.spec.empty()) << c.name;
    EXPECT_TRUE(c.make) << c.name;
    EXPECT_NE(c.axis("dist"), nullptr) << c.name << " has no input distribution axis";
    EXPECT_TRUE(c.spec.starts_with("docs/")) << c.name << ": its contract must be in the project's own docs";
    ASSERT_GE(c.variants.size(), 2u) << c.name;
    ASSERT_FALSE(c.pairs.empty()) << c.name;
    std::set<std::string> names;
    for (const VariantSpec& v : c.variants) {
      EXPECT_TRUE(names.insert(v.name).second) << c.name << ": variant " << v.name << " twice";
      EXPECT_GE(v.launches, 1) << c.name << "/" << v.name;
      if (v.emulation.kind == Claim::Kind::bound) {
        EXPECT_FALSE(v.emulation.bound.reason.empty()) << c.name << "/" << v.name;
        EXPECT_FALSE(v.emulation_note.empty()) << c.name << "/" << v.name << ": say why the emulation is not bitwise";
      }
    }
    for (const PairClaim& p : c.pairs) {
      EXPECT_NO_THROW(c.variant_id(p.variant)) << c.name;
      EXPECT_NO_THROW(c.variant_id(p.reference)) << c.name;
      EXPECT_NE(p.variant, p.reference) << c.name;
      if (p.claim.kind == Claim::Kind::bound) {
        EXPECT_FALSE(p.claim.bound.reason.empty()) << c.name;
      }
      // A pair compares only outputs both of its variants write (VariantSpec::writes).
      for (const std::string& side : {p.variant, p.reference}) {
        const VariantSpec& v = c.variants[c.variant_id(side)];
        if (v.writes.empty()) continue;
        EXPECT_FALSE(p.outputs.empty()) << c.name << ": " << side << " writes some outputs; its pair must name them";
        for (const std::string& o : p.outputs) {
          EXPECT_TRUE(v.writes_output(o)) << c.name << ": pair names " << o << ", which " << side << " does not write";
        }
      }
    }
  }
}

TEST(Axes, ValuesAreCheckedAgainstTheirSpec) {
  const AxisSpec m = AxisSpec::integer("M", "rows", {}, 1, 100);
  EXPECT_EQ(m.reject_reason(AxisValue{std::int64_t{5}}), "");
  EXPECT_EQ(m.reject_reason(AxisValue{std::int64_t{0}}), "axis M must be in [1, 100], got 0");
  EXPECT_EQ(m.reject_reason(AxisValue{std::string("x")}), "axis M takes an integer");
  const AxisSpec f = AxisSpec::choice("fp8", "flavour", {"e4m3fn", "e4m3fnuz"}, "e4m3fn");
  EXPECT_EQ(f.reject_reason(AxisValue{std::string("e5m2")}), "axis fp8 takes one of: e4m3fn, e4m3fnuz; got 'e5m2'");
}

}  // namespace
}  // namespace fb
