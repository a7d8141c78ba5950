#include "cli/manifest.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include "kiln/errors.hpp"

namespace kiln::cli {
namespace {

using Json = nlohmann::ordered_json;

// "name (generic) [cuda sm_90]" -> name, generic, cuda, sm_90.
ManifestEntry entry_of(const CacheRecord& r) {
  ManifestEntry e;
  e.kernel = r.kernel.substr(0, r.kernel.find_first_of(" "));
  e.mode = r.kernel.find(" (generic)") != std::string::npos ? Mode::generic : Mode::specialised;
  e.backend = r.backend;
  if (r.backend != "cpu") e.arch = r.target;
  e.specialisation = r.specialisation;
  e.kernel_file = r.kernel_file;
  e.kernel_digest = r.kernel_digest;
  return e;
}

// Each user kernel's latest text: the digest of its most recently stored
// record (the latest digest, for records stored in the same second).
std::map<std::string, std::string> latest_digests(const std::vector<CacheRecord>& records) {
  std::map<std::string, std::pair<std::int64_t, std::string>> latest;  // kernel: (created, digest)
  for (const CacheRecord& r : records) {
    if (r.kernel_digest.empty()) continue;
    auto& best = latest[entry_of(r).kernel];
    best = std::max(best, std::pair{r.created, r.kernel_digest});
  }
  std::map<std::string, std::string> out;
  for (const auto& [kernel, created_digest] : latest) out[kernel] = created_digest.second;
  return out;
}

const Json& field(const Json& object, const char* name, Json::value_t type, std::size_t index) {
  const auto it = object.find(name);
  if (it == object.end() || it->type() != type)
    throw Error("kiln: manifest entry " + std::to_string(index) + ": '" + name + "' is missing or of the wrong type");
  return *it;
}

// The optional string field, "" when missing.
std::string optional_string(const Json& object, const char* name, std::size_t index) {
  return object.contains(name) ? field(object, name, Json::value_t::string, index).get<std::string>() : "";
}

// One value of a Spec from JSON: bool, integer or double.
Spec::Value scalar_value(const Json& v, const std::string& kernel, const std::string& name) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return v.get<double>();
  throw SpecError("kiln: manifest, kernel '" + kernel + "': '" + name + "' must be a bool, an integer or a number");
}

void set(Spec& spec, const std::string& name, const Spec::Value& value) {
  if (const bool* b = std::get_if<bool>(&value)) spec.set(name, *b);
  else if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) spec.set(name, static_cast<long long>(*i));
  else if (const double* d = std::get_if<double>(&value)) spec.set(name, *d);
}

// "'path'", or what stands for a file a kernel was not read from.
std::string file_name(const std::string& path) { return path.empty() ? "none: registered as text" : "'" + path + "'"; }

std::string where_registered(const KernelDeclaration& d) {
  return d.file.empty() ? "the kernel registered (embedded, or as text)" : "kernel file '" + d.file + "'";
}

// The entry's kernel, from its kernel file; throws Error naming both when the
// file is missing, does not parse or declares another kernel.
void register_file_of(Runtime& rt, const ManifestEntry& e) {
  const std::string hint = "; give --kernel-file with a file that declares it";
  if (e.kernel_file.empty())
    throw Error("kiln warm: kernel '" + e.kernel + "' was registered as text, not from a file, when it was cached" +
                hint);
  std::string declared;
  try {
    declared = rt.register_kernel_file(e.kernel_file);
  } catch (const Error& error) {
    throw Error("kiln warm: kernel '" + e.kernel + "': the manifest's kernel file '" + e.kernel_file + "': " +
                error.what() + hint);
  }
  if (declared != e.kernel)
    throw Error("kiln warm: the manifest's kernel file '" + e.kernel_file + "' declares the kernel '" + declared +
                "', not '" + e.kernel + "'" + hint);
}

}  // namespace

std::vector<ManifestEntry> manifest_from_index(const std::vector<CacheRecord>& records) {
  const std::map<std::string, std::string> latest = latest_digests(records);
  std::vector<ManifestEntry> entries;
  for (const CacheRecord& r : records) {
    // A bundle holds kernels the manifest lists already (docs/manual/cache.md): no kernel of its own.
    if (r.backend == "bundle") continue;
    ManifestEntry e = entry_of(r);
    if (e.kernel_digest.empty() || e.kernel_digest == latest.at(e.kernel)) entries.push_back(std::move(e));
  }
  // A stable order, so two exports of the same cache compare equal.
  std::sort(entries.begin(), entries.end(), [](const ManifestEntry& a, const ManifestEntry& b) {
    return std::tie(a.kernel, a.backend, a.arch, a.mode, a.specialisation, a.kernel_file, a.kernel_digest) <
           std::tie(b.kernel, b.backend, b.arch, b.mode, b.specialisation, b.kernel_file, b.kernel_digest);
  });
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  return entries;
}

std::vector<ManifestEntry> manifest_of_cache(const Config& config, std::string_view command) {
  const std::string lead = std::string(command) + ": ";
  if (config.index_path == "off") throw Error(lead + "the index is off (KILN_INDEX_PATH=off): no manifest to take");
  // Opened as a Runtime opens it: what processes noted in its journal is folded in first.
  const Cache cache(config);
  std::vector<CacheRecord> records;
  try {
    records = cache.records();
  } catch (const Error& e) {  // the file at its path is not kiln's index
    throw Error(lead + e.what());
  }
  // An index that could not be read would give an empty manifest, as if the cache were.
  if (const std::string problem = cache.index_problem(); !problem.empty()) throw Error(lead + problem);
  return manifest_from_index(records);
}

std::string manifest_json(const std::vector<ManifestEntry>& entries) {
  Json out = {{"kiln_manifest", 1}, {"entries", Json::array()}};
  for (const ManifestEntry& e : entries) {
    Json entry = {{"kernel", e.kernel}};
    if (!e.kernel_digest.empty()) {  // a user kernel's
      entry["kernel_file"] = e.kernel_file;
      entry["kernel_digest"] = e.kernel_digest;
    }
    entry["mode"] = e.mode == Mode::generic ? "generic" : "specialised";
    entry["backend"] = e.backend;
    entry["arch"] = e.arch;
    entry["specialisation"] = Json::parse(e.specialisation.empty() ? "{}" : e.specialisation);
    out["entries"].push_back(std::move(entry));
  }
  return out.dump(2) + "\n";
}

std::vector<ManifestEntry> parse_manifest(std::string_view text) {
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || json.value("kiln_manifest", 0) != 1 ||
      !json.contains("entries") || !json["entries"].is_array())
    throw Error("kiln: not a kiln manifest (expected {\"kiln_manifest\": 1, \"entries\": [...]})");
  std::vector<ManifestEntry> entries;
  std::size_t index = 0;
  for (const Json& e : json["entries"]) {
    if (!e.is_object()) throw Error("kiln: manifest entry " + std::to_string(index) + " is not an object");
    ManifestEntry entry;
    entry.kernel = field(e, "kernel", Json::value_t::string, index).get<std::string>();
    const std::string mode = e.value("mode", "specialised");
    if (mode != "specialised" && mode != "generic")
      throw Error("kiln: manifest entry " + std::to_string(index) + ": mode '" + mode + "'");
    entry.mode = mode == "generic" ? Mode::generic : Mode::specialised;
    entry.backend = e.value("backend", "cpu");
    entry.arch = e.value("arch", "");
    entry.specialisation = field(e, "specialisation", Json::value_t::object, index).dump();
    entry.kernel_file = optional_string(e, "kernel_file", index);
    entry.kernel_digest = optional_string(e, "kernel_digest", index);
    entries.push_back(std::move(entry));
    ++index;
  }
  return entries;
}

void register_manifest_kernels(Runtime& rt, const std::vector<ManifestEntry>& entries) {
  for (const ManifestEntry& e : entries) {
    if (e.kernel_digest.empty()) continue;  // an embedded kernel: in libkiln
    const std::vector<std::string> known = rt.kernel_names();
    if (std::find(known.begin(), known.end(), e.kernel) == known.end()) register_file_of(rt, e);
    const KernelDeclaration declaration = rt.declaration(e.kernel);
    if (declaration.source_digest != e.kernel_digest)
      throw Error("kiln warm: kernel '" + e.kernel + "': " + where_registered(declaration) + " has text digest " +
                  declaration.source_digest + ", but the manifest's entry (kernel file " + file_name(e.kernel_file) +
                  ") has " + e.kernel_digest + ": the kernel changed since the manifest was written; refusing to "
                  "warm it (export the manifest again, or give --kernel-file with the text it was made from)");
  }
}

namespace {

Spec::Strides strides_of(const std::string& kernel, const std::string& name, const Json& value) {
  if (!value.is_array()) throw SpecError("kiln: manifest, kernel '" + kernel + "': '" + name + "' is not a parameter");
  if (value.size() > 5) throw SpecError("kiln: manifest, kernel '" + kernel + "': '" + name + "' has too many strides");
  Spec::Strides strides;
  for (const Json& s : value) {
    if (!s.is_number_integer()) throw SpecError("kiln: manifest, kernel '" + kernel + "': strides of '" + name + "'");
    strides.push_back(s.get<std::int64_t>());
  }
  return strides;
}

// A view holding only `strides`: what Spec::strides_of and blocked_like read.
kiln_arg view_of(const Spec::Strides& strides) {
  kiln_arg view{};
  view.rank = static_cast<std::int32_t>(strides.size());
  std::copy(strides.begin(), strides.end(), view.strides);
  return view;
}

// An array's layout as Spec::to_json writes it: [strides...], or for ICON's
// blocks {"nproma": p[, "strides": [...]][, "nblks": b]}.
void set_layout(Spec& spec, const std::string& kernel, const std::string& name, const Json& value) {
  if (value.is_object() && value.contains("nproma")) {
    const Json& nproma = value.at("nproma");
    if (!nproma.is_number_integer()) throw SpecError("kiln: manifest, kernel '" + kernel + "': nproma of '" + name + "'");
    const std::int64_t nblks = value.contains("nblks") && value.at("nblks").is_number_integer()
                                   ? value.at("nblks").get<std::int64_t>()
                                   : 0;
    if (!value.contains("strides")) {
      spec.blocked(name, nproma.get<std::int64_t>(), nblks);
      return;
    }
    kiln_arg view = view_of(strides_of(kernel, name, value.at("strides")));
    view.shape[0] = nproma.get<std::int64_t>();
    if (view.rank > 0) view.shape[view.rank - 1] = nblks;
    spec.blocked_like(name, view);
    return;
  }
  const Spec::Strides strides = strides_of(kernel, name, value);
  if (strides.size() > 4) throw SpecError("kiln: manifest, kernel '" + kernel + "': '" + name + "' has more than 4 strides");
  spec.strides_of(name, view_of(strides));
}

}  // namespace

std::vector<Spec> expand_specialisation(const ManifestEntry& entry, const KernelDeclaration& declaration) {
  const Json values = Json::parse(entry.specialisation);
  std::vector<Spec> specs(1);
  for (const auto& [name, value] : values.items()) {
    if (name == "kiln_run_time") continue;  // marks, applied below (Spec::to_json writes them)
    const bool is_parameter = std::any_of(declaration.parameters.begin(), declaration.parameters.end(),
                                          [&](const KernelParameter& p) { return p.name == name; });
    if (!is_parameter) {  // an array argument's strides, or its blocks
      for (Spec& spec : specs) set_layout(spec, entry.kernel, name, value);
      continue;
    }
    // A parameter: one value, or a list of variants (cross product).
    const std::vector<Json> choices = value.is_array() ? value.get<std::vector<Json>>() : std::vector<Json>{value};
    if (choices.empty()) throw SpecError("kiln: manifest, kernel '" + entry.kernel + "': no value for '" + name + "'");
    std::vector<Spec> crossed;
    for (const Spec& spec : specs)
      for (const Json& choice : choices) {
        Spec s = spec;
        set(s, name, scalar_value(choice, entry.kernel, name));
        crossed.push_back(std::move(s));
      }
    specs = std::move(crossed);
  }
  if (const auto marks = values.find("kiln_run_time"); marks != values.end()) {
    if (!marks->is_array()) throw SpecError("kiln: manifest, kernel '" + entry.kernel + "': kiln_run_time is not a list");
    for (const Json& name : *marks) {
      if (!name.is_string()) throw SpecError("kiln: manifest, kernel '" + entry.kernel + "': kiln_run_time holds a non-name");
      for (Spec& spec : specs) spec.run_time(name.get<std::string>());
    }
  }
  return specs;
}

}  // namespace kiln::cli
