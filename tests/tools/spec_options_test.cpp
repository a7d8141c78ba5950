// `kiln run --spec`'s parser (cli/spec_options.cpp) on its own: the forms
// each element type accepts and refuses, and messages that name the option,
// the name and the value. The command around it: run_command_test.cpp.
#include "cli/spec_options.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

// A parameter or scalar of every element type, and an array.
SpecDeclarations declared() {
  return {"k",
          {{"n", ElementType::i64, SpecRole::domain_parameter},
           {"flag", ElementType::boolean, SpecRole::static_parameter},
           {"w", ElementType::f64, SpecRole::static_parameter},
           {"i", ElementType::i32, SpecRole::scalar_argument},
           {"f", ElementType::f32, SpecRole::scalar_argument},
           {"x", ElementType::f64, SpecRole::array_argument}}};
}

const std::vector<std::string> kComplete = {"n=8", "flag=on", "w=0.5", "i=-3", "f=2.5"};

// The message parse_spec throws as E, or "" when it throws nothing or something else.
template <class E>
std::string error_of(const SpecDeclarations& declarations, const std::vector<std::string>& entries) {
  try {
    parse_spec(declarations, entries);
  } catch (const E& e) {
    return e.what();
  } catch (...) {
  }
  return "";
}

std::vector<std::string> with(std::vector<std::string> entries, const std::string& entry) {
  entries.push_back(entry);
  return entries;
}

std::vector<std::string> without(const std::string& name) {
  std::vector<std::string> entries;
  for (const std::string& entry : kComplete)
    if (!entry.starts_with(name + "=")) entries.push_back(entry);
  return entries;
}

TEST(SpecOptions, BoolTakesTheEightSpellingsOnly) {
  for (const char* yes : {"1", "true", "yes", "on"}) EXPECT_EQ(parse_value(ElementType::boolean, yes), SpecValue(true));
  for (const char* no : {"0", "false", "no", "off"}) EXPECT_EQ(parse_value(ElementType::boolean, no), SpecValue(false));
  for (const char* bad : {"", "TRUE", "Yes", "2", " 1", "1 ", "y", "truex"})
    EXPECT_FALSE(parse_value(ElementType::boolean, bad)) << bad;
}

TEST(SpecOptions, IntegersAreDecimalAndRangeChecked) {
  EXPECT_EQ(parse_value(ElementType::i64, "9223372036854775807"), SpecValue(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(parse_value(ElementType::i64, "-9223372036854775808"), SpecValue(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(parse_value(ElementType::i64, "007"), SpecValue(std::int64_t{7}));
  EXPECT_EQ(parse_value(ElementType::i32, "2147483647"), SpecValue(std::int32_t{2147483647}));
  EXPECT_EQ(parse_value(ElementType::i32, "-2147483648"), SpecValue(std::numeric_limits<std::int32_t>::min()));
  EXPECT_EQ(parse_value(ElementType::i32, "-0"), SpecValue(std::int32_t{0}));
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "0x10", "1.0", "1e3", "9223372036854775808", "1_000"})
    EXPECT_FALSE(parse_value(ElementType::i64, bad)) << bad;
  for (const char* bad : {"2147483648", "-2147483649", "3000000000", "+5", "1.5"})
    EXPECT_FALSE(parse_value(ElementType::i32, bad)) << bad;
}

TEST(SpecOptions, NumbersForDoubleAndFloat) {
  EXPECT_EQ(parse_value(ElementType::f64, "0.4"), SpecValue(0.4));
  EXPECT_EQ(parse_value(ElementType::f64, "-2.5E+10"), SpecValue(-2.5e10));
  EXPECT_EQ(parse_value(ElementType::f64, "4.9e-324"), SpecValue(4.9e-324));
  EXPECT_EQ(parse_value(ElementType::f64, "12"), SpecValue(12.0));
  EXPECT_EQ(parse_value(ElementType::f64, "-inf"), SpecValue(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(std::get<double>(*parse_value(ElementType::f64, "nan"))));
  for (const char* bad : {"", "0.4.1", "1e400", "+1", " 1", "0x1p3", "abc", "1,5", "1e"})
    EXPECT_FALSE(parse_value(ElementType::f64, bad)) << bad;

  EXPECT_EQ(parse_value(ElementType::f32, "2.5"), SpecValue(2.5f));
  EXPECT_EQ(parse_value(ElementType::f32, "3.4028234e38"), SpecValue(std::numeric_limits<float>::max()));
  EXPECT_EQ(parse_value(ElementType::f32, "inf"), SpecValue(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(parse_value(ElementType::f32, "1e-50"), SpecValue(0.0f));  // underflow rounds, as C++ converts
  for (const char* bad : {"3.5e38", "-1e39", "1e400", "x"}) EXPECT_FALSE(parse_value(ElementType::f32, bad)) << bad;
}

TEST(SpecOptions, EveryNameTypedAsDeclared) {
  const ParsedSpec parsed = parse_spec(declared(), kComplete);
  EXPECT_EQ(parsed.parameters.size(), 3u);
  EXPECT_EQ(parsed.parameters.at("n"), SpecValue(std::int64_t{8}));
  EXPECT_EQ(parsed.parameters.at("flag"), SpecValue(true));
  EXPECT_EQ(parsed.parameters.at("w"), SpecValue(0.5));
  EXPECT_EQ(parsed.scalars.size(), 2u);
  EXPECT_EQ(parsed.scalars.at("i"), SpecValue(std::int32_t{-3}));
  EXPECT_EQ(parsed.scalars.at("f"), SpecValue(2.5f));
  // The value is everything after the first '='.
  EXPECT_EQ(error_of<SpecError>(declared(), {"n=1=2", "flag=1", "w=1", "i=1", "f=1"}),
            "kiln run: kernel 'k', --spec n='1=2': expected an integer ('n' is an int64 domain parameter)");
}

TEST(SpecOptions, EntriesThatAreNotNameValue) {
  for (const char* entry : {"n", "=8", "n="})
    EXPECT_EQ(error_of<ArgumentError>(declared(), with(without("n"), entry)),
              std::string("kiln run: --spec '") + entry + "': expected name=value");
  EXPECT_EQ(error_of<ArgumentError>(declared(), with(kComplete, "n=9")), "kiln run: --spec gives 'n' twice");
  // Form comes first: an unknown name beside a malformed entry is not reached.
  EXPECT_EQ(error_of<ArgumentError>(declared(), {"bogus=1", "n"}), "kiln run: --spec 'n': expected name=value");
  EXPECT_EQ(split_pairs("--in", {"x=a=b.npy"}, "name=FILE.npy").at("x"), "a=b.npy");
}

TEST(SpecOptions, IllTypedValuesNameTheOptionTheValueAndTheDeclaration) {
  const std::string at = "kiln run: kernel 'k', --spec ";
  struct Case {
    const char* name;
    const char* value;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"n", "abc", "n='abc': expected an integer ('n' is an int64 domain parameter)"},
           {"flag", "maybe",
            "flag='maybe': expected true/false, 1/0, yes/no or on/off ('flag' is a bool static parameter)"},
           {"w", "0.4.1", "w='0.4.1': expected a number ('w' is a double static parameter)"},
           {"i", "3000000000", "i='3000000000': expected an integer in the int32 range ('i' is an int32 scalar)"},
           {"f", "1e39", "f='1e39': expected a number in the float range ('f' is a float scalar)"}})
    EXPECT_EQ(error_of<SpecError>(declared(), with(without(c.name), std::string(c.name) + "=" + c.value)),
              at + c.message);
}

TEST(SpecOptions, UnknownArrayAndMissingNames) {
  const std::string at = "kiln run: kernel 'k', --spec ";
  EXPECT_EQ(error_of<SpecError>(declared(), with(kComplete, "bogus=1")),
            at + "bogus: no parameter or scalar argument 'bogus'; --spec takes: n, flag, w, i, f");
  EXPECT_EQ(error_of<SpecError>(declared(), with(kComplete, "x=1")),
            at + "x: 'x' is an array argument: give it with --in x=FILE.npy or --shape x=AxB");
  EXPECT_EQ(error_of<SpecError>(declared(), {"n=1", "i=2"}),
            at + "lacks flag (bool static parameter), w (double static parameter), f (float scalar)");
  EXPECT_EQ(error_of<SpecError>({"none", {{"x", ElementType::f64, SpecRole::array_argument}}}, {"y=1"}),
            "kiln run: kernel 'none', --spec y: no parameter or scalar argument 'y'; --spec takes: none");
  // A kernel with nothing to give takes an empty --spec.
  const ParsedSpec nothing = parse_spec({"none", {{"x", ElementType::f64, SpecRole::array_argument}}}, {});
  EXPECT_TRUE(nothing.parameters.empty() && nothing.scalars.empty());
}

}  // namespace
}  // namespace kiln::cli
