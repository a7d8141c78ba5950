#include "cache/byte_size.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace kiln::cache {

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// Decimal digits with an optional fraction ("500", "1.5"): no sign, no
// exponent ("1e3"), no hexadecimal, no "inf", nothing before or after.
bool is_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return all_digits(text);
  return all_digits(text.substr(0, dot)) && all_digits(text.substr(dot + 1));
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  // One rule for every size kiln reads (KILN_CACHE_MAX_SIZE, gc --max-size):
  // the number in decimal, then the unit's letters only.
  const std::size_t unit_at = std::min(text.find_first_not_of("0123456789."), text.size());
  if (!is_decimal(text.substr(0, unit_at))) return std::nullopt;
  double number = 0;  // from the digits alone: from_chars would read "1e3" whole
  const auto [end, error] = std::from_chars(text.data(), text.data() + unit_at, number);
  if (error != std::errc() || end != text.data() + unit_at || !(number >= 0)) return std::nullopt;
  std::string unit(text.substr(unit_at));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  else if (unit.ends_with("B")) unit.resize(unit.size() - 1);
  int power = 0;
  if (unit == "K") power = 1;
  else if (unit == "M") power = 2;
  else if (unit == "G") power = 3;
  else if (unit == "T") power = 4;
  else if (!unit.empty()) return std::nullopt;
  const double bytes = number * std::pow(1024.0, power);
  if (bytes >= 1.8e19) return std::nullopt;  // beyond 64 bits
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace kiln::cache
