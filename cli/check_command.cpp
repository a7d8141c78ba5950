// `kiln check FILE... [--spec JSON]`: parses and compiles each kernel file
// without running anything, so that a model's build or CI finds a broken
// kernel before a run does. Each file is compiled generic (one binary for
// every value, so any values do); with --spec, also specialised on those values. The compiler's
// messages come out as a run would give them ("file:line: ..."), and the exit
// status is non-zero when a file fails. The cache is a throwaway one (memory
// only) unless --cache is given: a check does not fill the user's cache.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/manifest.hpp"
#include "kiln/kiln.hpp"

namespace kiln::cli {
namespace {

struct CheckOptions {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> specs;  // JSON objects, as a manifest entry's "specialisation"
  bool cache = false;              // use the cache KILN_CACHE_DIR names
};

// Refused before anything compiles: a --spec that is not a JSON object.
void check_specs(const std::vector<std::string>& specs) {
  for (const std::string& spec : specs)
    if (!nlohmann::json::parse(spec, nullptr, false).is_object())
      throw ArgumentError("kiln check: --spec '" + spec + "' is not a JSON object (e.g. '{\"n\": 8, \"flag\": true}')");
}

// Any value of each parameter: a generic build reads them at run time, so its
// binary (and its cache key) is the same for every value, and nothing runs here.
Spec placeholder_values(const KernelDeclaration& declaration) {
  Spec spec;
  for (const KernelParameter& p : declaration.parameters) {
    if (p.type == ElementType::boolean) spec.set(p.name, false);
    else if (p.type == ElementType::f64 || p.type == ElementType::f32) spec.set(p.name, 0.0);
    else spec.set(p.name, 0LL);
  }
  return spec;
}

// A --spec's Specs, its errors said as the option's, not a manifest's.
std::vector<Spec> variants_of(const ManifestEntry& entry, const KernelDeclaration& declaration) {
  try {
    return expand_specialisation(entry, declaration);
  } catch (const SpecError& error) {
    throw SpecError("kiln check: --spec '" + entry.specialisation + "': " + error.what());
  }
}

// One file: registered (parsed), compiled generic, then once per --spec
// variant specialised (a listed static value stands for each of its values,
// as in a manifest). Returns what it compiled; throws the first error.
std::size_t check_file(Runtime& rt, const std::filesystem::path& file, const std::vector<std::string>& specs) {
  const std::string name = rt.register_kernel_file(file);
  rt.kernel(name, placeholder_values(rt.declaration(name)), Mode::generic);
  std::size_t builds = 1;
  for (const std::string& spec : specs) {
    const ManifestEntry entry{.kernel = name, .specialisation = spec};
    for (const Spec& variant : variants_of(entry, rt.declaration(name))) {
      rt.kernel(name, variant, Mode::specialised);
      ++builds;
    }
  }
  return builds;
}

void check(const CheckOptions& o) {
  check_specs(o.specs);
  Config config = Config::from_env();
  if (!o.cache) config.use_disk_cache = false;
  Runtime rt(config);
  std::size_t failed = 0;
  for (const std::filesystem::path& file : o.files) {
    try {
      const std::size_t builds = check_file(rt, file, o.specs);
      std::printf("ok: %s (%zu build%s)\n", file.c_str(), builds, builds == 1 ? "" : "s");
    } catch (const Error& e) {
      // Each file's error, then the next file: one run reports them all.
      ++failed;
      std::fprintf(stderr, "kiln check: %s: failed:\n%s\n", file.c_str(), e.what());
    }
  }
  if (failed)
    throw Error("kiln check: " + std::to_string(failed) + " of " + std::to_string(o.files.size()) +
                " kernel files failed (see above)");
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Parse and compile kernel files without running them (a model's build or CI checks its kernels)");
  cmd->add_option("files", options->files, "kernel files (the kernel format, see the README)")->required();
  cmd->add_option("--spec", options->specs,
                  "also compile specialised on these values (repeatable), a JSON object as in a manifest: "
                  "'{\"horizontal_start\": 0, \"horizontal_end\": 64, \"flag\": [false, true]}'");
  cmd->add_flag("--cache", options->cache, "keep what is compiled in the cache (default: a throwaway, memory only)");
  cmd->callback([options] { check(*options); });
}

}  // namespace kiln::cli
