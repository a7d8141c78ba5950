#include "cache/entry_metadata.hpp"

#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

namespace kiln::cache {

namespace {

using nlohmann::json;

// The field's text, or nullopt when it is missing or not a string.
std::optional<std::string> string_field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// False when the field is there but not a string; `out` is left as it is
// when the field is missing.
bool optional_string(const json& object, const char* name, std::string& out) {
  if (!object.contains(name)) return true;
  std::optional<std::string> text = string_field(object, name);
  if (text) out = std::move(*text);
  return text.has_value();
}

}  // namespace

std::string encode_metadata(const IndexRecord& record, const BuildRecipe* recipe) {
  json object = {{"kernel", record.kernel},
                 {"specialisation", record.specialisation},
                 {"backend", record.backend},
                 {"target", record.target},
                 {"compile_ms", record.compile_ms}};
  // A user kernel's only: an embedded kernel's metadata stays as it was.
  if (!record.kernel_digest.empty()) {
    object["kernel_file"] = record.kernel_file;
    object["kernel_digest"] = record.kernel_digest;
  }
  if (recipe != nullptr)
    object["build"] = {{"opt_level", recipe->opt_level},
                       {"fp_contract", recipe->fp_contract},
                       {"target_cpu", recipe->target_cpu},
                       {"check", recipe->check},
                       {"compiler", recipe->compiler},
                       {"gather", recipe->gather}};
  // replace: a name that is not valid UTF-8 must not make storing an entry throw.
  return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<IndexRecord> decode_metadata(std::string_view text) {
  // allow_exceptions = false: bad text gives a "discarded" value, not an exception.
  const json object = json::parse(text.begin(), text.end(), nullptr, false);
  if (!object.is_object()) return std::nullopt;
  auto kernel = string_field(object, "kernel");
  auto specialisation = string_field(object, "specialisation");
  auto backend = string_field(object, "backend");
  auto target = string_field(object, "target");
  if (!kernel || !specialisation || !backend || !target) return std::nullopt;
  const auto compile_ms = object.find("compile_ms");
  if (compile_ms == object.end() || !compile_ms->is_number()) return std::nullopt;
  const double ms = compile_ms->get<double>();
  if (!std::isfinite(ms) || ms < 0) return std::nullopt;

  IndexRecord record;
  record.kernel = std::move(*kernel);
  record.specialisation = std::move(*specialisation);
  record.backend = std::move(*backend);
  record.target = std::move(*target);
  record.compile_ms = ms;
  // Absent from embedded kernels' and older entries' metadata; strings where present.
  if (!optional_string(object, "kernel_file", record.kernel_file) ||
      !optional_string(object, "kernel_digest", record.kernel_digest))
    return std::nullopt;
  return record;
}

std::optional<BuildRecipe> decode_recipe(std::string_view text) {
  const json object = json::parse(text.begin(), text.end(), nullptr, false);
  if (!object.is_object()) return std::nullopt;
  const auto build = object.find("build");
  if (build == object.end() || !build->is_object()) return std::nullopt;
  auto opt_level = string_field(*build, "opt_level");
  auto fp_contract = string_field(*build, "fp_contract");
  auto target_cpu = string_field(*build, "target_cpu");
  auto compiler = string_field(*build, "compiler");
  const auto check = build->find("check");
  if (!opt_level || !fp_contract || !target_cpu || !compiler || check == build->end() || !check->is_boolean())
    return std::nullopt;
  BuildRecipe recipe{std::move(*opt_level), std::move(*fp_contract), std::move(*target_cpu), check->get<bool>(),
                     std::move(*compiler)};
  // Absent from entries written before it was recorded: "" (not recorded).
  recipe.gather.clear();
  if (!optional_string(*build, "gather", recipe.gather)) return std::nullopt;
  return recipe;
}

}  // namespace kiln::cache
