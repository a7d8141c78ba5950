#include "cache/byte_size.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace kiln::cache {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data() || !(number >= 0)) return std::nullopt;
  std::string unit(end, text.data() + text.size());
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
