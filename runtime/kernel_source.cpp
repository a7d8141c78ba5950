#include "runtime/kernel_source.hpp"

#include <regex>
#include <set>

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

const std::regex& identifier() {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return re;
}

void check_name(const Line& line, const std::string& name, std::set<std::string>& taken) {
  if (!std::regex_match(name, identifier())) line.fail("'" + name + "' is not an identifier");
  if (name.rfind("kiln", 0) == 0) line.fail("names starting with 'kiln' are reserved: '" + name + "'");
  if (!taken.insert(name).second) line.fail("'" + name + "' is declared twice");
}

// One `#pragma kiln <what> <rest>` line.
void parse_declaration(const Line& line, const std::string& what, const std::string& rest, KernelInfo& info,
                       std::set<std::string>& taken) {
  std::smatch m;
  if (what == "kernel") {
    if (!info.name.empty()) line.fail("a second '#pragma kiln kernel'");
    if (!std::regex_match(rest, identifier())) line.fail("expected '#pragma kiln kernel <name>'");
    info.name = rest;
  } else if (what == "array") {
    static const std::regex re(R"((\w+)\s+(\w+)\s*\[\s*([1-4])\s*\])");
    ElementType type;
    if (!std::regex_match(rest, m, re) || !parse_type(m[1].str(), type) || type == ElementType::boolean)
      line.fail("expected '#pragma kiln array <double|float|int32|int64> <name>[<rank 1-4>]'");
    check_name(line, m[2].str(), taken);
    info.args.push_back({m[2].str(), type, std::stoi(m[3].str())});
  } else if (what == "scalar") {
    static const std::regex re(R"((\w+)\s+(\w+))");
    ElementType type;
    if (!std::regex_match(rest, m, re) || !parse_type(m[1].str(), type))
      line.fail("expected '#pragma kiln scalar <double|float|int32|int64|bool> <name>'");
    check_name(line, m[2].str(), taken);
    info.args.push_back({m[2].str(), type, 0});
  } else if (what == "domain") {
    static const std::regex separators(R"([\s,]+)");
    std::sregex_token_iterator it(rest.begin(), rest.end(), separators, -1), end;
    int count = 0;
    for (; it != end; ++it) {
      if (it->str().empty()) continue;
      check_name(line, it->str(), taken);
      info.params.push_back({it->str(), ParamKind::domain, ElementType::i64});
      ++count;
    }
    if (count == 0) line.fail("expected '#pragma kiln domain <name> [<name>...]'");
  } else if (what == "static") {
    static const std::regex re(R"((bool|int|double)\s+(\w+))");
    if (!std::regex_match(rest, m, re)) line.fail("expected '#pragma kiln static <bool|int|double> <name>'");
    ElementType type;
    parse_type(m[1].str(), type);
    check_name(line, m[2].str(), taken);
    info.params.push_back({m[2].str(), ParamKind::static_value, type});
  } else {
    line.fail("unknown declaration '#pragma kiln " + what + "' (kernel, array, scalar, domain, static)");
  }
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
  static const std::regex pragma(R"(^\s*#\s*pragma\s+kiln\b\s*(\w*)\s*(.*?)\s*$)");
  KernelInfo info;
  info.file_name = file_name;
  info.source = source;
  std::set<std::string> taken;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    std::string text(source.substr(pos, end - pos));
    ++number;
    std::smatch m;
    if (std::regex_match(text, m, pragma)) {
      parse_declaration({file_name, number}, m[1].str(), m[2].str(), info, taken);
      text.clear();  // blank the line, keep the numbering
    }
    info.body += text;
    if (end < source.size()) info.body += '\n';
    pos = end + 1;
  }
  if (info.name.empty()) Line{file_name, 1}.fail("no '#pragma kiln kernel <name>' declaration");
  return info;
}

std::string_view type_name(ElementType type) {
  switch (type) {
    case ElementType::f64: return "double";
    case ElementType::f32: return "float";
    case ElementType::i32: return "int32";
    case ElementType::i64: return "int64";
    case ElementType::boolean: return "bool";
  }
  return "unknown";
}

}  // namespace kiln::runtime
