// libFuzzer target over `kiln run --spec`'s parser (cli/spec_options.cpp):
// the input, split at commas as the command line splits --spec, is a list of
// name=value entries parsed against a fixed kernel declaring a parameter or
// scalar of every element type and one array. Built and run by run_fuzz.sh
// with ASan and UBSan.
//
// Findings (each aborts):
//  - an exception other than ArgumentError or SpecError, or a message that
//    does not start "kiln run: ";
//  - parse_spec's outcome (ArgumentError, SpecError or values) differing from
//    a model of the documented rules: ArgumentError for an entry that is not
//    name=value or a name given twice, else SpecError for an unknown name, an
//    array, an ill-typed value or a missing name, else every parameter and
//    scalar typed as declared and equal to parse_value of its text;
//  - for every entry's value and every element type, parse_value disagreeing
//    with an independent reading: bool only the eight documented spellings;
//    int64 and int32 exactly the decimal integers in range (a model parser);
//    double the value strtod gives for the whole text, and one that survives
//    to_chars/from_chars bit for bit; float the double rounded, never
//    infinite from a finite text.
//
// KILN_FUZZ_WRITE_SEEDS=<folder>: write seed inputs (a complete --spec, edge
// values of every type, each kind of error) there and exit.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/spec_options.hpp"
#include "tests/fuzz/seeds.hpp"

namespace {

using namespace kiln;
using namespace kiln::cli;

// A broken invariant is a bug the fuzzer must report: abort, never return.
void require(bool holds, const char* what, std::string_view detail = {}) {
  if (holds) return;
  std::fprintf(stderr, "spec_fuzz: invariant broken: %s [%.*s]\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

const SpecDeclarations& declarations() {
  static const SpecDeclarations declared{
      "fuzzed",
      {{"n", ElementType::i64, SpecRole::domain_parameter},
       {"flag", ElementType::boolean, SpecRole::static_parameter},
       {"k", ElementType::i64, SpecRole::static_parameter},
       {"w", ElementType::f64, SpecRole::static_parameter},
       {"i32", ElementType::i32, SpecRole::scalar_argument},
       {"i64", ElementType::i64, SpecRole::scalar_argument},
       {"f64", ElementType::f64, SpecRole::scalar_argument},
       {"f32", ElementType::f32, SpecRole::scalar_argument},
       {"b", ElementType::boolean, SpecRole::scalar_argument},
       {"arr", ElementType::f64, SpecRole::array_argument}}};
  return declared;
}

constexpr ElementType kTypes[] = {ElementType::boolean, ElementType::i32, ElementType::i64, ElementType::f64,
                                  ElementType::f32};

// The variant alternative each declared type must give.
std::size_t alternative(ElementType type) {
  switch (type) {
    case ElementType::boolean: return 0;
    case ElementType::i32: return 1;
    case ElementType::i64: return 2;
    case ElementType::f64: return 3;
    case ElementType::f32: return 4;
  }
  return std::variant_npos;
}

// A decimal integer: an optional '-' and one or more digits, nothing else; nullopt outside int64.
std::optional<std::int64_t> model_integer(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  unsigned __int128 magnitude = 0;
  const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 64;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
    if (magnitude > cap) magnitude = cap;  // too big either way; keep checking the digits
  }
  const auto limit = static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max());
  if (magnitude > limit + (negative ? 1 : 0)) return std::nullopt;
  if (!negative) return static_cast<std::int64_t>(magnitude);
  return magnitude == limit + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
}

bool same_double(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// parse_value(type, text) against the independent readings above.
void check_value(ElementType type, std::string_view text) {
  const std::optional<SpecValue> value = parse_value(type, text);
  if (value) require(value->index() == alternative(type), "the alternative is the declared type's", text);
  switch (type) {
    case ElementType::boolean: {
      std::optional<bool> want;
      for (const char* yes : {"1", "true", "yes", "on"})
        if (text == yes) want = true;
      for (const char* no : {"0", "false", "no", "off"})
        if (text == no) want = false;
      require(value.has_value() == want.has_value(), "bool: accepted exactly the eight spellings", text);
      if (value) require(std::get<bool>(*value) == *want, "bool: the spelling's value", text);
      return;
    }
    case ElementType::i64: {
      const std::optional<std::int64_t> want = model_integer(text);
      require(value.has_value() == want.has_value(), "int64: accepted exactly the decimal integers in range", text);
      if (value) require(std::get<std::int64_t>(*value) == *want, "int64: the integer's value", text);
      return;
    }
    case ElementType::i32: {
      std::optional<std::int64_t> want = model_integer(text);
      constexpr std::int64_t low = std::numeric_limits<std::int32_t>::min();
      constexpr std::int64_t high = std::numeric_limits<std::int32_t>::max();
      if (want && (*want < low || *want > high)) want.reset();
      require(value.has_value() == want.has_value(), "int32: accepted exactly the decimal integers in range", text);
      if (value) require(std::get<std::int32_t>(*value) == *want, "int32: the integer's value", text);
      return;
    }
    case ElementType::f64:
    case ElementType::f32: break;
  }
  const std::optional<SpecValue> as_double = parse_value(ElementType::f64, text);
  if (type == ElementType::f32) {
    if (!value) {
      // Refused as float: not a number, or a finite one beyond the float range.
      require(!as_double || (std::isfinite(std::get<double>(*as_double)) &&
                             std::fabs(std::get<double>(*as_double)) > std::numeric_limits<float>::max()),
              "float: refused only what is not a number or beyond the float range", text);
      return;
    }
    require(as_double.has_value(), "float: accepted only what double accepts", text);
    const double d = std::get<double>(*as_double);
    const float f = std::get<float>(*value);
    require(std::isfinite(d) == std::isfinite(f), "float: finite exactly when the text is", text);
    require(std::isnan(d) ? std::isnan(f) : f == static_cast<float>(d), "float: the double rounded to float", text);
    return;
  }
  if (!value) return;
  const double d = std::get<double>(*value);
  // The whole text as strtod reads it (std::from_chars accepts a subset of strtod's forms).
  const std::string copy(text);
  char* end = nullptr;
  const double by_strtod = std::strtod(copy.c_str(), &end);
  require(end == copy.c_str() + copy.size(), "double: strtod reads the whole accepted text", text);
  require(same_double(d, by_strtod), "double: the value strtod reads", text);
  // Shortest round trip: what to_chars writes reads back as the same double.
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, d);
  require(written.ec == std::errc(), "double: to_chars writes it", text);
  const std::optional<SpecValue> again = parse_value(ElementType::f64, std::string_view(buffer, written.ptr - buffer));
  require(again && same_double(std::get<double>(*again), d), "double: round-trips through to_chars", text);
}

// What parse_spec must conclude, from the documented rules.
enum class Outcome { argument_error, spec_error, values };

Outcome model_outcome(const std::vector<std::string>& entries) {
  std::set<std::string> names;
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) return Outcome::argument_error;
    if (!names.insert(entry.substr(0, eq)).second) return Outcome::argument_error;
  }
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    const SpecName* declared = nullptr;
    for (const SpecName& name : declarations().names)
      if (name.name == std::string_view(entry).substr(0, eq)) declared = &name;
    if (!declared || declared->role == SpecRole::array_argument) return Outcome::spec_error;
    if (!parse_value(declared->type, std::string_view(entry).substr(eq + 1))) return Outcome::spec_error;
  }
  for (const SpecName& name : declarations().names)
    if (name.role != SpecRole::array_argument && !names.contains(name.name)) return Outcome::spec_error;
  return Outcome::values;
}

// A successful parse: every parameter and scalar once, typed as declared, the value of its entry's text.
void check_values(const ParsedSpec& parsed, const std::vector<std::string>& entries) {
  std::size_t wanted = 0;
  for (const SpecName& name : declarations().names) {
    if (name.role == SpecRole::array_argument) continue;
    ++wanted;
    const bool parameter = name.role != SpecRole::scalar_argument;
    const auto& given = parameter ? parsed.parameters : parsed.scalars;
    const auto found = given.find(name.name);
    require(found != given.end(), "every declared name has a value", name.name);
    require(found->second.index() == alternative(name.type), "the value is typed as declared", name.name);
    for (const std::string& entry : entries) {
      if (!entry.starts_with(name.name + "=")) continue;
      const std::string_view text = std::string_view(entry).substr(name.name.size() + 1);
      const std::optional<SpecValue> value = parse_value(name.type, text);
      require(value.has_value(), "the entry's text parses", entry);
      const bool same = std::visit(
          [&](auto a) {
            const auto b = std::get<decltype(a)>(*value);
            if constexpr (std::is_floating_point_v<decltype(a)>) return (std::isnan(a) && std::isnan(b)) || a == b;
            else return a == b;
          },
          found->second);
      require(same, "the value is the entry's", entry);
    }
  }
  require(parsed.parameters.size() + parsed.scalars.size() == wanted, "nothing but the declared names", "");
}

std::vector<std::string> split_entries(std::string_view input) {
  std::vector<std::string> entries;
  while (true) {
    const auto comma = input.find(',');
    entries.emplace_back(input.substr(0, comma));
    if (comma == std::string_view::npos) return entries;
    input.remove_prefix(comma + 1);
  }
}

void write_seeds(const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  const std::string complete = "n=20480,flag=true,k=-3,w=0.4,i32=7,i64=-9000000000,f64=1e-3,f32=2.5,b=off";
  const std::vector<std::string> seeds = {
      complete,
      "n=0,flag=0,k=0,w=0,i32=-2147483648,i64=9223372036854775807,f64=inf,f32=-inf,b=1",
      "n=-9223372036854775808,flag=yes,k=1,w=nan,i32=2147483647,i64=0,f64=-0.0,f32=3.4028234e38,b=no",
      "n=1,flag=on,k=2,w=1e308,i32=0,i64=1,f64=4.9e-324,f32=1e-50,b=false",
      "n=1,flag=false,k=2,w=2.2250738585072014e-308,i32=1,i64=2,f64=1.7976931348623157e308,f32=NaN,b=true",
      // Refused values, one of each kind
      "n=1,flag=maybe,k=2,w=3,i32=2147483648,i64=1,f64=1,f32=1,b=1",
      "n=0x10,flag=1,k=+5,w=1e400,i32=1,i64=1,f64=0x1p3,f32=3.5e38,b=TRUE",
      "n= 1,flag=1,k=1.0,w=1e,i32=-2147483649,i64=9223372036854775808,f64=1.5e,f32=1e39,b=2",
      // Errors of form, unknown names, arrays, missing names, duplicates
      "n,flag=1",
      "=1,n=2",
      "n=,k=1",
      "n=1,n=2",
      "bogus=1," + complete,
      "arr=1," + complete,
      "n=1,k=2",
      "",
      ",",
      "n=1=2,flag=1,k=2,w=3,i32=4,i64=5,f64=6,f32=7,b=on"};
  for (std::size_t i = 0; i < seeds.size(); ++i)
    std::ofstream(folder / ("seed" + std::to_string(i))) << seeds[i];
  std::printf("spec_fuzz: %zu seeds written to %s\n", seeds.size(), folder.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  write_seeds_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> entries = split_entries(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    // The value's text, or the whole entry when it has no '='.
    const std::string_view text = std::string_view(entry).substr(eq == std::string::npos ? 0 : eq + 1);
    for (ElementType type : kTypes) check_value(type, text);
  }
  const Outcome want = model_outcome(entries);
  try {
    const ParsedSpec parsed = parse_spec(declarations(), entries);
    require(want == Outcome::values, "parse_spec accepted what the rules refuse");
    check_values(parsed, entries);
  } catch (const ArgumentError& e) {
    require(want == Outcome::argument_error, "parse_spec threw ArgumentError where the rules do not", e.what());
    require(std::string_view(e.what()).starts_with("kiln run: --spec "), "an ArgumentError names --spec", e.what());
  } catch (const SpecError& e) {
    require(want == Outcome::spec_error, "parse_spec threw SpecError where the rules do not", e.what());
    require(std::string_view(e.what()).starts_with("kiln run: kernel 'fuzzed', --spec "),
            "a SpecError names the kernel and --spec", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spec_fuzz: neither ArgumentError nor SpecError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
