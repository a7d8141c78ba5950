#include "cli/cache_show.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cache_entry.hpp"
#include "cli/manifest.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::cli {
namespace {

struct ShowRequest {
  std::string key;                        // a key or a unique prefix; or, empty:
  std::string kernel;                     // a kernel ...
  std::string spec;                       // ... its values (a JSON object, as a manifest's) ...
  bool generic = false;                   // ... and its mode
  std::vector<std::string> kernel_files;  // user kernels to register first
  bool source_only = false;               // print the translation unit alone
};

const std::string kLead = "kiln cache show: ";

// The options a Runtime compiles with, from the environment, with those the
// entry records (when it does) in their place: the key is computed again
// from them. No disk cache: only keys and source are made, nothing is read
// or written, and no metrics are printed.
Config generating_config(const std::optional<CacheBuildRecipe>& recipe) {
  Config config = Config::from_env();
  config.use_disk_cache = false;
  config.index_path = "off";
  config.print_metrics = false;
  config.metrics_file.clear();
  config.time_calls = false;
  if (recipe) {
    config.opt_level = recipe->opt_level;
    config.fp_contract = recipe->fp_contract;
    config.target_cpu = recipe->target_cpu;
    config.check = recipe->check;
    if (!recipe->gather.empty()) config.gather = recipe->gather;  // else not recorded: the environment's
  }
  return config;
}

void register_files(Runtime& rt, const std::vector<std::string>& files) {
  for (const std::string& file : files) rt.register_kernel_file(file);
}

bool registered(const Runtime& rt, const std::string& kernel) {
  for (const std::string& name : rt.kernel_names())
    if (name == kernel) return true;
  return false;
}

// A user kernel's text, from --kernel-file or the file the entry names, must
// be the one the entry was compiled from: its digest is in the entry.
void register_user_kernel(Runtime& rt, const ManifestEntry& entry) {
  if (!registered(rt, entry.kernel)) {
    if (entry.kernel_file.empty())
      throw Error("kernel '" + entry.kernel + "' was registered as text when it was cached: give --kernel-file");
    rt.register_kernel_file(entry.kernel_file);
  }
  const KernelDeclaration declaration = rt.declaration(entry.kernel);
  if (declaration.source_digest != entry.kernel_digest)
    throw Error("kernel '" + entry.kernel + "': the text of " +
                (declaration.file.empty() ? std::string("the kernel registered") : "'" + declaration.file + "'") +
                " has digest " + declaration.source_digest + ", the entry was compiled from " + entry.kernel_digest);
}

// The one Spec of a manifest entry (a value per parameter, no lists).
Spec spec_of(const ManifestEntry& entry, const Runtime& rt) {
  const std::vector<Spec> specs = expand_specialisation(entry, rt.declaration(entry.kernel));
  if (specs.size() != 1)
    throw SpecError("kiln: kernel '" + entry.kernel + "': the values list several variants; give one value each");
  return specs.front();
}

GeneratedSource generate(Runtime& rt, const ManifestEntry& entry) {
  const Spec spec = spec_of(entry, rt);
  if (entry.backend == "cpu") return rt.generated_source(entry.kernel, spec, entry.mode);
  const GpuTarget target{entry.backend == "hip" ? GpuBackend::hip : GpuBackend::cuda, entry.arch};
  return rt.generated_source(entry.kernel, spec, target, entry.mode);
}

// The entry's translation unit as this kiln generates it from the entry's record.
GeneratedSource regenerate(const CacheEntry& contents, const std::vector<std::string>& kernel_files) {
  Runtime rt(generating_config(contents.recipe));
  register_files(rt, kernel_files);
  const ManifestEntry entry = manifest_from_index({contents.record}).front();
  if (!entry.kernel_digest.empty()) register_user_kernel(rt, entry);
  return generate(rt, entry);
}

std::string utc_time(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &parts);
  return text;
}

void print_metadata(const CacheEntry& e) {
  const ManifestEntry entry = manifest_from_index({e.record}).front();
  std::printf("key:             %s\n", e.file.key.c_str());
  std::printf("file:            %s (%llu bytes, stored %s)\n", e.file.file.c_str(),
              static_cast<unsigned long long>(e.file.file_bytes), utc_time(e.file.stored).c_str());
  std::printf("kernel:          %s\n", entry.kernel.c_str());
  if (!entry.kernel_digest.empty())
    std::printf("kernel file:     %s (text digest %s)\n",
                entry.kernel_file.empty() ? "(registered as text)" : entry.kernel_file.c_str(),
                entry.kernel_digest.c_str());
  std::printf("mode:            %s\n", entry.mode == Mode::generic ? "generic" : "specialised");
  std::printf("specialisation:  %s\n", e.record.specialisation.c_str());
  std::printf("backend:         %s\n", e.record.backend.c_str());
  std::printf("target:          %s\n", e.record.target.c_str());
  std::printf("binary:          %llu bytes, compiled in %.1f ms\n", static_cast<unsigned long long>(e.payload.size()),
              e.record.compile_ms);
}

// A CPU entry's options as its recipe records them, in the form
// Runtime::generated_source gives them; a GPU entry's are its compiler's flags.
std::string recorded_options(const CacheEntry& e, const std::optional<GeneratedSource>& source) {
  if (e.record.backend != "cpu") return source ? source->options : "(in the compiler's flags below)";
  const CacheBuildRecipe& r = *e.recipe;
  return "-" + r.opt_level + " -ffp-contract=" + r.fp_contract + " -march=" + r.target_cpu +
         (r.gather.empty() || r.gather == "auto" ? "" : " gather=" + r.gather) + (r.check ? " (check mode)" : "");
}

void print_options(const CacheEntry& e, const std::optional<GeneratedSource>& source) {
  if (!e.recipe) {
    std::printf("options:         not recorded (an entry of a kiln before issue 22)%s%s\n",
                source ? "; this environment's settings give " : "", source ? source->options.c_str() : "");
    return;
  }
  std::printf("options:         %s\n", recorded_options(e, source).c_str());
  std::printf("compiler:        %s\n", e.recipe->compiler.c_str());
}

// Whether the text shown is the one compiled, as the keys say.
std::string verdict(const CacheEntry& e, const GeneratedSource& source) {
  if (source.key == e.file.key)
    return "regenerated; its key is the entry's, so this is the text the entry was compiled from";
  return "regenerated, but its key " + source.key +
         " is not the entry's: the entry was made by another kiln build, for another target or with other options " +
         "(this is what this kiln compiles for the same kernel and values)";
}

void print_source(const CacheEntry& e, const GeneratedSource& source, bool source_only) {
  if (source_only) {
    if (source.key != e.file.key) std::fprintf(stderr, "%s%s\n", kLead.c_str(), verdict(e, source).c_str());
    std::fputs(source.text.c_str(), stdout);
    return;
  }
  std::printf("\n// ---- translation unit %s: %s ----\n", source.file_name.c_str(), verdict(e, source).c_str());
  std::fputs(source.text.c_str(), stdout);
  if (!source.text.empty() && source.text.back() != '\n') std::fputc('\n', stdout);
}

// A cache bundle (docs/manual/cache.md, Bundles) holds the binaries of
// entries shown on their own: it has no kernel or translation unit of its own.
void print_bundle(const CacheEntry& e) {
  std::printf("key:             %s\n", e.file.key.c_str());
  std::printf("file:            %s (%llu bytes, stored %s)\n", e.file.file.c_str(),
              static_cast<unsigned long long>(e.file.file_bytes), utc_time(e.file.stored).c_str());
  std::printf("cache bundle:    %s, the binaries of a batch's kernels (each also in its own entry)\n",
              e.record.specialisation.c_str());
}

// Prints the entry; throws Error when its translation unit cannot be made
// again (after the metadata, which is shown either way).
void show(const CacheEntry& contents, const ShowRequest& request, std::optional<GeneratedSource> source) {
  if (contents.record.backend == "bundle") {
    if (request.source_only)
      throw Error(kLead + contents.file.key + " is a cache bundle: no translation unit of its own");
    return print_bundle(contents);
  }
  std::string problem;
  if (!source) {
    try {
      source = regenerate(contents, request.kernel_files);
    } catch (const std::exception& e) {  // a kiln Error, or the recorded values not JSON
      problem = e.what();
    }
  }
  if (!request.source_only) {
    print_metadata(contents);
    print_options(contents, source);
  }
  if (source) print_source(contents, *source, request.source_only);
  if (!problem.empty()) throw Error(kLead + "cannot regenerate the translation unit: " + problem);
}

void show_by_key(const ShowRequest& request) {
  const std::vector<Cache> tiers = Cache::lookup_tiers(Config::from_env());
  show(read_entry(find_entry(tiers, request.key)), request, std::nullopt);
}

// The key of (kernel, values, mode) with the environment's options, then its entry.
void show_by_kernel(const ShowRequest& request) {
  Runtime rt(generating_config(std::nullopt));
  register_files(rt, request.kernel_files);
  const ManifestEntry entry{request.kernel, request.generic ? Mode::generic : Mode::specialised, "cpu", "",
                            request.spec};
  GeneratedSource source = generate(rt, entry);
  const std::vector<Cache> tiers = Cache::lookup_tiers(Config::from_env());
  const std::optional<EntryLocation> where = find_exact_entry(tiers, source.key);
  if (!where)
    throw Error(kLead + "no entry for kernel '" + request.kernel + "' with these values and " + source.options +
                " (key " + source.key + "): nothing has compiled it yet");
  show(read_entry(*where), request, std::move(source));
}

void run(const ShowRequest& request) {
  if (request.key.empty() == request.kernel.empty())
    throw ArgumentError(kLead + "give a KEY (or a unique prefix, as `kiln cache ls` prints it), or --kernel NAME");
  if (!request.kernel.empty() && !nlohmann::json::parse(request.spec, nullptr, false).is_object())
    throw ArgumentError(kLead + "--spec '" + request.spec + "' is not a JSON object (e.g. '{\"n\": 8}')");
  if (!request.key.empty()) {
    show_by_key(request);
  } else {
    show_by_kernel(request);
  }
}

}  // namespace

void add_cache_show_command(CLI::App& cache) {
  auto request = std::make_shared<ShowRequest>();
  CLI::App* show = cache.add_subcommand(
      "show", "Print an entry's metadata, compiler options and the C++ translation unit it was compiled from");
  show->add_option("KEY", request->key, "the entry's key, or a prefix of it that no other key has");
  show->add_option("--kernel", request->kernel, "instead of a key: the kernel, with --spec and --generic");
  show->add_option("--spec", request->spec, "the kernel's values, a JSON object as a manifest entry's specialisation")
      ->default_str("{}");
  show->add_flag("--generic", request->generic, "the generic build (values read at run time)");
  show->add_option("--kernel-file", request->kernel_files, "register this kernel file first (repeatable)");
  show->add_flag("--source", request->source_only, "print the translation unit alone (to compile it by hand)");
  show->callback([request] {
    if (request->spec.empty()) request->spec = "{}";
    run(*request);
  });
}

}  // namespace kiln::cli
