#include "cache.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <nanobind/stl/chrono.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "config.hpp"
#include "kiln/cache.hpp"
#include "kiln/runtime.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace kiln::python {
namespace {

// The folder a Runtime of the same settings writes to; read-only: nothing written, the index not opened.
Cache open(const nb::kwargs& settings, bool read_only) {
  const Config config = config_from(settings);
  if (!read_only) return Cache(config);
  return Cache(config.cache_dir, {.index_path = config.index_path, .trusted_dirs = config.trusted_dirs,
                                  .read_only = true, .log_level = config.log_level});
}

// An index path, or None for the index off (pathlib.Path("") would read as the current folder).
std::optional<std::filesystem::path> path_or_none(const std::filesystem::path& path) {
  if (path.empty()) return std::nullopt;
  return path;
}

void define_results(nb::module_& m) {
  nb::class_<CacheEntryFile>(m, "CacheEntryFile", "One entry file as the folder lists it (nothing read).")
      .def_ro("key", &CacheEntryFile::key, "32 lowercase hex digits.")
      .def_ro("file", &CacheEntryFile::file)
      .def_ro("file_bytes", &CacheEntryFile::file_bytes, "The binary, its metadata and the trailer.")
      .def_ro("stored", &CacheEntryFile::stored, "The file's modification time: when it was stored.")
      .def("__repr__", [](const CacheEntryFile& f) {
        return "kiln.CacheEntryFile(" + f.key + ", " + std::to_string(f.file_bytes) + " bytes)";
      });

  nb::class_<CacheRecord>(m, "CacheRecord", "What the index (or an entry's own metadata) says about an entry.")
      .def_ro("key", &CacheRecord::key)
      .def_ro("kernel", &CacheRecord::kernel, "The name; ' (generic)' or ' [cuda sm_90]' follow for those builds.")
      .def_ro("specialisation", &CacheRecord::specialisation, "The values compiled in, a JSON object's text.")
      .def_ro("backend", &CacheRecord::backend, "'cpu', 'cuda' or 'hip'.")
      .def_ro("target", &CacheRecord::target, "The CPU's triple, name and features, or the GPU's architecture.")
      .def_ro("payload_bytes", &CacheRecord::payload_bytes)
      .def_ro("compile_ms", &CacheRecord::compile_ms)
      .def_ro("created", &CacheRecord::created, "Unix seconds.")
      .def_ro("last_used", &CacheRecord::last_used, "Unix seconds: the latest hit the index noted.")
      .def_ro("hits", &CacheRecord::hits)
      .def_ro("kernel_file", &CacheRecord::kernel_file, "A user kernel's file; '' for embedded kernels and text.")
      .def_ro("kernel_digest", &CacheRecord::kernel_digest, "A user kernel's text digest.")
      .def("__repr__", [](const CacheRecord& r) { return "kiln.CacheRecord(" + r.key + ": " + r.kernel + ")"; });

  nb::class_<CacheBuildRecipe>(m, "CacheBuildRecipe", "How an entry was built beyond its record.")
      .def_ro("opt_level", &CacheBuildRecipe::opt_level)
      .def_ro("fp_contract", &CacheBuildRecipe::fp_contract)
      .def_ro("target_cpu", &CacheBuildRecipe::target_cpu)
      .def_ro("check", &CacheBuildRecipe::check)
      .def_ro("compiler", &CacheBuildRecipe::compiler)
      .def_ro("gather", &CacheBuildRecipe::gather);

  nb::class_<CacheEntry>(m, "CacheEntry", "One entry read whole and verified (Cache.read).")
      .def_ro("file", &CacheEntry::file)
      .def_ro("record", &CacheEntry::record, "From the entry's metadata: no hits; created is the file's time.")
      .def_ro("recipe", &CacheEntry::recipe, "None for entries of kilns before issue 22.")
      .def_prop_ro(
          "payload", [](const CacheEntry& e) { return nb::bytes(e.payload.data(), e.payload.size()); },
          "The binary: an object file, CUBIN, PTX or a code object.");

  nb::class_<CacheStats>(m, "CacheStats", "What `kiln cache stats` prints.")
      .def_ro("dir", &CacheStats::dir)
      .def_prop_ro("index", [](const CacheStats& s) { return path_or_none(s.index); }, "None when the index is off.")
      .def_ro("entries", &CacheStats::entries)
      .def_ro("bytes", &CacheStats::bytes)
      .def_ro("indexed", &CacheStats::indexed)
      .def_ro("hits", &CacheStats::hits)
      .def_ro("compile_ms", &CacheStats::compile_ms);

  nb::class_<CacheVerifyReport>(m, "CacheVerifyReport", "What Cache.verify found and did.")
      .def_ro("checked", &CacheVerifyReport::checked)
      .def_ro("bad", &CacheVerifyReport::bad)
      .def_ro("removed", &CacheVerifyReport::removed)
      .def_ro("odd", &CacheVerifyReport::odd, "Non-files under an entry's name, left in place.")
      .def_ro("temporaries_removed", &CacheVerifyReport::temporaries_removed)
      .def_ro("problems", &CacheVerifyReport::problems, "One per bad entry, naming its file and the cause.")
      .def_ro("removed_keys", &CacheVerifyReport::removed_keys)
      .def_prop_ro("damage_left", &CacheVerifyReport::damage_left, "Bad entries or files stayed.");

  nb::class_<CacheGcReport>(m, "CacheGcReport", "What Cache.gc removed and left.")
      .def_ro("limit", &CacheGcReport::limit)
      .def_ro("max_age", &CacheGcReport::max_age)
      .def_ro("removed", &CacheGcReport::removed)
      .def_ro("bytes_freed", &CacheGcReport::bytes_freed)
      .def_ro("bytes_left", &CacheGcReport::bytes_left)
      .def_ro("removed_keys", &CacheGcReport::removed_keys, "Least recently used first.")
      .def_ro("failures", &CacheGcReport::failures, "Entries that had to go and stayed, each naming the cause.")
      .def_prop_ro("fits", &CacheGcReport::fits);

  nb::class_<CacheClearReport>(m, "CacheClearReport", "What Cache.clear removed and left.")
      .def_ro("removed", &CacheClearReport::removed)
      .def_ro("failures", &CacheClearReport::failures);

  nb::class_<CacheReindexReport>(m, "CacheReindexReport", "What Cache.reindex put in the new index.")
      .def_ro("records", &CacheReindexReport::records)
      .def_ro("without_metadata", &CacheReindexReport::without_metadata)
      .def_ro("skipped", &CacheReindexReport::skipped);
}

}  // namespace

void define_cache(nb::module_& m) {
  define_results(m);
  nb::class_<Cache>(m, "Cache",
                    "A kernel cache folder to administer: what `kiln cache` does (docs/manual/cache.md).\n\n"
                    "Cache(**settings) opens the folder a Runtime of the same settings (cache_dir,\n"
                    "index_path, trusted_dirs, log_level, over the KILN_* variables) writes to.\n"
                    "read_only=True: nothing is written or removed, the index not even opened.")
      .def(
          "__init__",
          [](Cache* self, bool read_only, const nb::kwargs& settings) { new (self) Cache(open(settings, read_only)); },
          nb::kw_only(), "read_only"_a = false, "settings"_a,
          nb::sig("def __init__(self, *, read_only: bool = False, **settings: object) -> None"))
      .def_prop_ro("dir", &Cache::dir)
      .def_prop_ro("index_path", [](const Cache& c) { return path_or_none(c.index_path()); },
                   "None when the index is off.")
      .def_prop_ro("read_only", &Cache::read_only)
      .def("entry_file", &Cache::entry_file, "key"_a, "The file the entry of `key` has, or would have.")
      .def("entries", &Cache::entries, "Every entry file, by key.")
      .def("records", &Cache::records,
           "The index's records, by key; none when the index is off or the Cache read-only.\n"
           "Raises Error when the file at the index's path is not kiln's index.")
      .def_prop_ro("index_problem", &Cache::index_problem, "Why the index cannot be used; '' when it can.")
      .def("stats", &Cache::stats)
      .def("read", &Cache::read, "key"_a,
           "The entry of `key` read whole and verified, or None. ArgumentError for a key\n"
           "that is not one; Error naming the file for a corrupt or untrusted entry.")
      .def("verify", &Cache::verify, "Reads every entry; removes bad ones (unless read-only) and their records.")
      .def("gc", &Cache::gc, "max_bytes"_a, "max_age"_a = nb::none(),
           "Least recently used entries go until the cache fits in max_bytes and, with\n"
           "max_age (a datetime.timedelta), none is left unused for longer.")
      .def("clear", &Cache::clear, "Removes every entry and its record.")
      .def("reindex", &Cache::reindex, "Rebuilds the index from the entries' metadata.")
      .def("__repr__", [](const Cache& c) {
        return "kiln.Cache(" + c.dir().string() + (c.read_only() ? ", read-only)" : ")");
      });
  m.def("parse_byte_size", &parse_byte_size, "text"_a,
        "A size as KILN_CACHE_MAX_SIZE takes it ('500M', '1.5G', bytes), or None.");
}

}  // namespace kiln::python
