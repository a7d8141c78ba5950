// `kiln run --spec name=value`: the values of a kernel's parameters and scalar
// arguments, read from text as their declarations type them. Pure parsing:
// text in, typed values or an error naming the option and the value out. No
// JIT and no Runtime: the declarations come in as a plain description
// (SpecDeclarations, filled by run_command.cpp from Runtime::declaration), so
// tests/fuzz/spec_fuzz.cpp compiles this file on its own.
//
// Errors: ArgumentError for an entry that is not name=value or a name given
// twice (split_pairs); SpecError for everything else (an ill-typed value, an
// unknown name, an array argument, a missing value). Nothing else is thrown
// but std::bad_alloc.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/errors.hpp"

namespace kiln::cli {

// An option's name=value entries by name.
using Pairs = std::map<std::string, std::string, std::less<>>;

// The name=value entries of one option ("--spec", "--in", "--shape"), by name.
// Throws ArgumentError "kiln run: OPTION 'ENTRY': expected FORM" for an entry
// with no '=', an empty name or an empty value, and "kiln run: OPTION gives
// 'NAME' twice" for a name given twice. The value is everything after the
// first '=' (it may hold more).
Pairs split_pairs(const std::string& option, const std::vector<std::string>& entries, const char* form);

// The whole of `text` as a T (std::from_chars: no sign but '-', no blanks, no
// base prefix; floating point in fixed or scientific form, inf and nan too);
// nullopt when any of it is left over or the value is out of T's range.
template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The spellings the KILN_* variables accept: 1, true, yes, on and 0, false,
// no, off (lower case only).
std::optional<bool> parse_bool(std::string_view text);

// What a value of `type` must be, for messages: "an integer in the int32 range".
std::string expected_value(ElementType type);

// "an int64 ...", "a double ...".
std::string with_article(const std::string& text);

// "kiln run: kernel 'NAME', ": how kiln run's messages about a kernel start.
std::string kernel_context(std::string_view kernel);

// One value, of the alternative its declared type names: bool, int32, int64,
// double, float.
using SpecValue = std::variant<bool, std::int32_t, std::int64_t, double, float>;

// `text` as `type` wants it: parse_bool for bool; a decimal integer for int64
// and, range-checked, int32; a number for double, and for float one whose
// magnitude a float holds (infinities and NaN included), rounded to float
// through double. nullopt when the text is not such a value.
std::optional<SpecValue> parse_value(ElementType type, std::string_view text);

// What a name stands for in a kernel's declarations.
enum class SpecRole { domain_parameter, static_parameter, scalar_argument, array_argument };

struct SpecName {
  std::string name;
  ElementType type;
  SpecRole role;
};

// A kernel's declarations as --spec needs them: the parameters first, in
// declaration order, then the arguments in order (arrays too, for the message
// that sends them to --in). Names are unique (the kernel parser sees to it).
struct SpecDeclarations {
  std::string kernel;
  std::vector<SpecName> names;
};

// "int64 domain parameter", "double static parameter", "float scalar", "double array".
std::string describe(const SpecName& name);

struct ParsedSpec {
  std::map<std::string, SpecValue, std::less<>> parameters;  // every parameter declared
  std::map<std::string, SpecValue, std::less<>> scalars;     // every scalar argument declared
};

// The --spec entries (name=value, one per entry, as the command line split
// them at commas) against the declarations: every parameter and scalar
// argument exactly once, each typed as declared. Entries are checked in the
// order of their names; the first problem throws (see the top of this file).
ParsedSpec parse_spec(const SpecDeclarations& declared, const std::vector<std::string>& entries);

}  // namespace kiln::cli
