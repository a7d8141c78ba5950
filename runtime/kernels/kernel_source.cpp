#include "runtime/kernels/kernel_source.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

struct Line {
  std::string_view file;
  int number;
  [[noreturn]] void fail(const std::string& what) const {
    throw KernelSourceError(std::string(file) + ":" + std::to_string(number) + ": " + what);
  }
};

bool parse_type(std::string_view text, ElementType& type) {
  static const std::pair<std::string_view, ElementType> kTypes[] = {
      {"double", ElementType::f64}, {"float", ElementType::f32},  {"int32", ElementType::i32},
      {"int64", ElementType::i64},  {"int", ElementType::i64},    {"bool", ElementType::boolean}};
  for (const auto& [name, value] : kTypes)
    if (text == name) {
      type = value;
      return true;
    }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The words of a declaration; commas separate like blanks. No regex: a Runtime
// parses every embedded kernel when it starts, and std::regex made that 60 us.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (is_space(text[i]) || text[i] == ',')) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !is_space(text[i]) && text[i] != ',') ++i;
    if (i > begin) out.push_back(text.substr(begin, i - begin));
  }
  return out;
}

// Kernel, argument and parameter names alike (README, "Kernel sources").
void check_not_reserved(const Line& line, std::string_view name) {
  if (name.starts_with("kiln")) line.fail("names starting with 'kiln' are reserved: '" + std::string(name) + "'");
}

void check_name(const Line& line, std::string_view name, std::set<std::string, std::less<>>& taken) {
  if (!is_identifier(name)) line.fail("'" + std::string(name) + "' is not an identifier");
  check_not_reserved(line, name);
  if (!taken.emplace(name).second) line.fail("'" + std::string(name) + "' is declared twice");
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// "name[rank]" with rank 1 to 4 (blanks allowed around the brackets' content).
bool split_array(std::string_view text, std::string_view& name, int& rank) {
  const auto open = text.find('[');
  if (open == std::string_view::npos || text.empty() || text.back() != ']') return false;
  const std::string_view inside = trimmed(text.substr(open + 1, text.size() - open - 2));
  if (inside.size() != 1 || inside[0] < '1' || inside[0] > '4') return false;
  name = trimmed(text.substr(0, open));
  rank = inside[0] - '0';
  return true;
}

// `#pragma kiln temporary <type> <name>[<rank>] like <array>`: `array` is
// declared above it, with the same rank.
void parse_temporary(const Line& line, const std::vector<std::string_view>& w, std::string_view rest,
                     KernelInfo& info, std::set<std::string, std::less<>>& taken) {
  const auto usage = [&] {
    line.fail("expected '#pragma kiln temporary <double|float|int32|int64> <name>[<rank 1-4>] like <array>'");
  };
  ElementType type;
  const std::size_t like_at = rest.rfind(" like ");
  if (w.size() < 4 || w[w.size() - 2] != "like" || like_at == std::string_view::npos || !parse_type(w[0], type) ||
      type == ElementType::boolean)
    usage();
  std::string_view name;
  int rank = 0;
  if (!split_array(trimmed(rest.substr(w[0].size(), like_at - w[0].size())), name, rank)) usage();
  check_name(line, name, taken);
  const std::string_view like = w.back();
  const auto found = std::find_if(info.args.begin(), info.args.end(), [&](const ArgDecl& a) { return a.name == like; });
  if (found == info.args.end() || found->rank == 0)
    line.fail("temporary '" + std::string(name) + "': '" + std::string(like) + "' is not an array declared above it");
  if (found->rank != rank)
    line.fail("temporary '" + std::string(name) + "' has rank " + std::to_string(rank) + ", '" + std::string(like) +
              "' rank " + std::to_string(found->rank) + ": a temporary is laid out like an array of its rank");
  info.temporaries.push_back({std::string(name), type, rank, static_cast<std::size_t>(found - info.args.begin())});
}

// One `#pragma kiln <what> <rest>` line.
void parse_declaration(const Line& line, std::string_view what, std::string_view rest, KernelInfo& info,
                       std::set<std::string, std::less<>>& taken) {
  const std::vector<std::string_view> w = words(rest);
  ElementType type;
  if (what == "kernel") {
    if (!info.name.empty()) line.fail("a second '#pragma kiln kernel'");
    if (w.size() != 1 || !is_identifier(w[0])) line.fail("expected '#pragma kiln kernel <name>'");
    check_not_reserved(line, w[0]);
    info.name = w[0];
  } else if (what == "array") {
    std::string_view name;
    int rank = 0;
    // rest is "<type> <name>[<rank>]" with the type first (no leading blanks).
    if (w.size() < 2 || !parse_type(w[0], type) || type == ElementType::boolean ||
        !split_array(trimmed(rest.substr(w[0].size())), name, rank))
      line.fail("expected '#pragma kiln array <double|float|int32|int64> <name>[<rank 1-4>]'");
    check_name(line, name, taken);
    info.args.push_back({std::string(name), type, rank});
  } else if (what == "temporary") {
    parse_temporary(line, w, rest, info, taken);
  } else if (what == "scalar") {
    if (w.size() != 2 || !parse_type(w[0], type))
      line.fail("expected '#pragma kiln scalar <double|float|int32|int64|bool> <name>'");
    check_name(line, w[1], taken);
    info.args.push_back({std::string(w[1]), type, 0});
  } else if (what == "domain") {
    if (w.empty()) line.fail("expected '#pragma kiln domain <name> [<name>...]'");
    for (std::string_view name : w) {
      check_name(line, name, taken);
      info.params.push_back({std::string(name), ParamKind::domain, ElementType::i64});
    }
  } else if (what == "static") {
    if (w.size() != 2 || (w[0] != "bool" && w[0] != "int" && w[0] != "double") || !parse_type(w[0], type))
      line.fail("expected '#pragma kiln static <bool|int|double> <name>'");
    check_name(line, w[1], taken);
    info.params.push_back({std::string(w[1]), ParamKind::static_value, type});
  } else {
    line.fail("unknown declaration '#pragma kiln " + std::string(what) +
              "' (kernel, array, temporary, scalar, domain, static)");
  }
}

// Splits "  #  pragma kiln what rest" into (what, rest); false for any other line.
bool match_pragma(std::string_view text, std::string_view& what, std::string_view& rest) {
  auto skip = [&](std::size_t i) {
    while (i < text.size() && is_space(text[i])) ++i;
    return i;
  };
  std::size_t i = skip(0);
  if (i == text.size() || text[i] != '#') return false;
  i = skip(i + 1);
  for (std::string_view word : {std::string_view("pragma"), std::string_view("kiln")}) {
    if (text.substr(i, word.size()) != word) return false;
    i += word.size();
    if (i < text.size() && !is_space(text[i])) return false;
    i = skip(i);
  }
  const std::size_t end = text.find_first_of(" \t", i);
  what = text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
  rest = end == std::string_view::npos ? std::string_view() : trimmed(text.substr(end));
  return true;
}

}  // namespace

const ArgDecl* KernelInfo::find_arg(std::string_view wanted) const {
  for (const auto& arg : args)
    if (arg.name == wanted) return &arg;
  return nullptr;
}

const ParamDecl* KernelInfo::find_param(std::string_view wanted) const {
  for (const auto& param : params)
    if (param.name == wanted) return &param;
  return nullptr;
}

KernelInfo parse_kernel_source(std::string_view source, std::string_view file_name) {
  KernelInfo info;
  info.file_name = file_name;
  info.source = source;
  info.body.reserve(source.size());
  std::set<std::string, std::less<>> taken;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view text = source.substr(pos, end - pos);
    ++number;
    std::string_view what, rest;
    if (match_pragma(text, what, rest)) parse_declaration({file_name, number}, what, rest, info, taken);
    else info.body += text;  // a declaration line stays as an empty line: numbering is kept
    if (end < source.size()) info.body += '\n';
    pos = end + 1;
  }
  if (info.name.empty()) Line{file_name, 1}.fail("no '#pragma kiln kernel <name>' declaration");
  return info;
}

}  // namespace kiln::runtime
