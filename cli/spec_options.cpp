// `kiln run --spec`: see spec_options.hpp.
#include "cli/spec_options.hpp"

#include <cmath>
#include <limits>

namespace kiln::cli {

Pairs split_pairs(const std::string& option, const std::vector<std::string>& entries, const char* form) {
  Pairs pairs;
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
      throw ArgumentError("kiln run: " + option + " '" + entry + "': expected " + form);
    if (!pairs.emplace(entry.substr(0, eq), entry.substr(eq + 1)).second)
      throw ArgumentError("kiln run: " + option + " gives '" + entry.substr(0, eq) + "' twice");
  }
  return pairs;
}

std::optional<bool> parse_bool(std::string_view text) {
  for (const char* yes : {"1", "true", "yes", "on"})
    if (text == yes) return true;
  for (const char* no : {"0", "false", "no", "off"})
    if (text == no) return false;
  return std::nullopt;
}

std::string expected_value(ElementType type) {
  switch (type) {
    case ElementType::f64: return "a number";
    case ElementType::f32: return "a number in the float range";
    case ElementType::i32: return "an integer in the int32 range";
    case ElementType::i64: return "an integer";
    case ElementType::boolean: return "true/false, 1/0, yes/no or on/off";
  }
  return "a value";
}

std::string with_article(const std::string& text) { return (text.starts_with("int") ? "an " : "a ") + text; }

std::string kernel_context(std::string_view kernel) { return "kiln run: kernel '" + std::string(kernel) + "', "; }

std::optional<SpecValue> parse_value(ElementType type, std::string_view text) {
  switch (type) {
    case ElementType::f64: return parse_number<double>(text);
    case ElementType::f32: {
      // A float given a finite value it cannot hold would silently become infinite.
      const auto number = parse_number<double>(text);
      if (!number || (std::isfinite(*number) && std::fabs(*number) > std::numeric_limits<float>::max()))
        return std::nullopt;
      return static_cast<float>(*number);
    }
    case ElementType::boolean: return parse_bool(text);
    case ElementType::i64: return parse_number<std::int64_t>(text);
    case ElementType::i32: {
      const auto number = parse_number<std::int64_t>(text);
      if (!number || *number < std::numeric_limits<std::int32_t>::min() ||
          *number > std::numeric_limits<std::int32_t>::max())
        return std::nullopt;
      return static_cast<std::int32_t>(*number);
    }
  }
  return std::nullopt;
}

std::string describe(const SpecName& name) {
  const std::string type(type_name(name.type));
  switch (name.role) {
    case SpecRole::domain_parameter: return type + " domain parameter";
    case SpecRole::static_parameter: return type + " static parameter";
    case SpecRole::scalar_argument: return type + " scalar";
    case SpecRole::array_argument: return type + " array";
  }
  return type;
}

namespace {

bool is_parameter(const SpecName& name) {
  return name.role == SpecRole::domain_parameter || name.role == SpecRole::static_parameter;
}

const SpecName* find(const SpecDeclarations& declared, std::string_view name) {
  for (const SpecName& declaration : declared.names)
    if (declaration.name == name) return &declaration;
  return nullptr;
}

// What --spec takes: the parameters and the scalar arguments, comma-separated.
std::string spec_names(const SpecDeclarations& declared) {
  std::string list;
  for (const SpecName& name : declared.names)
    if (name.role != SpecRole::array_argument) list += (list.empty() ? "" : ", ") + name.name;
  return list.empty() ? "none" : list;
}

SpecValue typed_value(const SpecDeclarations& declared, const SpecName& name, const std::string& text) {
  const std::optional<SpecValue> value = parse_value(name.type, text);
  if (!value)
    throw SpecError(kernel_context(declared.kernel) + "--spec " + name.name + "='" + text + "': expected " +
                    expected_value(name.type) + " ('" + name.name + "' is " + with_article(describe(name)) + ")");
  return *value;
}

void check_nothing_missing(const SpecDeclarations& declared, const ParsedSpec& values) {
  std::string missing;
  for (const SpecName& name : declared.names) {
    if (name.role == SpecRole::array_argument) continue;
    const auto& given = is_parameter(name) ? values.parameters : values.scalars;
    if (!given.contains(name.name)) missing += (missing.empty() ? "" : ", ") + name.name + " (" + describe(name) + ")";
  }
  if (!missing.empty()) throw SpecError(kernel_context(declared.kernel) + "--spec lacks " + missing);
}

}  // namespace

ParsedSpec parse_spec(const SpecDeclarations& declared, const std::vector<std::string>& entries) {
  ParsedSpec values;
  for (const auto& [name, text] : split_pairs("--spec", entries, "name=value")) {
    const SpecName* declaration = find(declared, name);
    if (!declaration)
      throw SpecError(kernel_context(declared.kernel) + "--spec " + name + ": no parameter or scalar argument '" +
                      name + "'; --spec takes: " + spec_names(declared));
    if (declaration->role == SpecRole::array_argument)
      throw SpecError(kernel_context(declared.kernel) + "--spec " + name + ": '" + name +
                      "' is an array argument: give it with --in " + name + "=FILE.npy or --shape " + name + "=AxB");
    (is_parameter(*declaration) ? values.parameters : values.scalars)[name] = typed_value(declared, *declaration, text);
  }
  check_nothing_missing(declared, values);
  return values;
}

}  // namespace kiln::cli
