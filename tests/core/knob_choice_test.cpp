// The two-form knob parse every kernel family shares (core/knob_choice.hpp).
#include "core/knob_choice.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fb {
namespace {

TEST(KnobChoice, UnsetOrEmptyLeavesTheDefaultAndAKnownValueIsReturned) {
  EXPECT_EQ(knob_choice("FUSEBENCH_X", nullptr, "one", "two"), "");
  EXPECT_EQ(knob_choice("FUSEBENCH_X", "", "one", "two"), "");
  EXPECT_EQ(knob_choice("FUSEBENCH_X", "one", "one", "two"), "one");
  EXPECT_EQ(knob_choice("FUSEBENCH_X", "two", "one", "two"), "two");
}

TEST(KnobChoice, AnUnknownValueIsAnInputErrorNamingTheVariableAndTheChoices) {
  try {
    knob_choice("FUSEBENCH_X", "Two", "one", "two");
    FAIL() << "a value outside the two choices was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "FUSEBENCH_X must be one or two, not 'Two'");
  }
}

}  // namespace
}  // namespace fb
