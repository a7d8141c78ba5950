// `kiln cache ls | stats | clear | gc | verify | reindex`: the on-disk store and its index.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ctime>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "cache/byte_size.hpp"
#include "cache/disk_store.hpp"
#include "cache/eviction.hpp"
#include "cache/index.hpp"
#include "cache/index_rebuild.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "tools/commands.hpp"
#include "tools/manifest.hpp"

namespace kiln::tools {
namespace {

struct CacheLocation {
  std::filesystem::path dir;
  std::filesystem::path index;  // empty: no index
};

CacheLocation locate(const Config& config) {
  CacheLocation where{config.cache_dir, {}};
  if (config.index_path != "off")
    where.index = config.index_path.empty() ? config.cache_dir / "index.sqlite" : config.index_path;
  return where;
}

CacheLocation locate() { return locate(Config::from_env()); }

// The store as the runtime opens it: the same trusted folders, so gc and
// verify refuse (and spare) what a Runtime would not load.
cache::DiskStore open_store(const Config& config) {
  return cache::DiskStore(config.cache_dir, {.read_only = false, .trusted_dirs = config.trusted_dirs});
}

// The index as a Runtime opens it: made (and filled from the entries) when
// missing, rebuilt when corrupt, and the journal of what processes stored
// and hit since it was last opened folded in. Null when the index is off.
std::unique_ptr<cache::Index> open_index(const CacheLocation& where) {
  if (where.index.empty()) return nullptr;
  return cache::open_or_rebuild_index(where.index, cache::DiskStore(where.dir));
}

std::map<std::string, cache::IndexRecord> index_records(const CacheLocation& where) {
  std::map<std::string, cache::IndexRecord> by_key;
  if (const auto index = open_index(where))
    for (auto& record : index->list()) by_key.emplace(record.key.hex(), std::move(record));
  return by_key;
}

void list_entries() {
  const CacheLocation where = locate();
  const auto records = index_records(where);
  std::printf("%-32s %9s %6s %10s  %s\n", "key", "bytes", "hits", "compile_ms", "kernel specialisation");
  for (const auto& entry : cache::DiskStore(where.dir).list()) {
    const std::string hex = entry.key.hex();
    auto it = records.find(hex);
    if (it == records.end()) {
      std::printf("%-32s %9llu %6s %10s  (not in the index)\n", hex.c_str(),
                  static_cast<unsigned long long>(entry.file_size), "-", "-");
      continue;
    }
    const cache::IndexRecord& r = it->second;
    std::printf("%-32s %9llu %6lld %10.1f  %s %s\n", hex.c_str(), static_cast<unsigned long long>(entry.file_size),
                static_cast<long long>(r.hits), r.compile_ms, r.kernel.c_str(), r.specialisation.c_str());
  }
}

void print_stats() {
  const CacheLocation where = locate();
  const auto entries = cache::DiskStore(where.dir).list();
  std::uint64_t bytes = 0;
  for (const auto& e : entries) bytes += e.file_size;
  const auto records = index_records(where);
  long long hits = 0;
  double compile_ms = 0.0;
  for (const auto& [_, r] : records) {
    hits += r.hits;
    compile_ms += r.compile_ms;
  }
  std::printf("folder:         %s\n", where.dir.c_str());
  std::printf("index:          %s\n", where.index.empty() ? "(off)" : where.index.c_str());
  std::printf("entries:        %zu\n", entries.size());
  std::printf("bytes:          %llu\n", static_cast<unsigned long long>(bytes));
  std::printf("indexed:        %zu\n", records.size());
  std::printf("disk hits:      %lld\n", hits);
  std::printf("compile time:   %.1f ms (what the entries cost to build)\n", compile_ms);
}

void clear_cache() {
  const CacheLocation where = locate();
  const std::size_t removed = cache::DiskStore(where.dir).clear();
  if (const auto index = open_index(where)) index->clear();  // after folding in the journal
  std::printf("removed %zu entries from %s\n", removed, where.dir.c_str());
}

// Drops the index records of entries that are gone, so ls and stats agree with the folder.
void forget(const CacheLocation& where, std::span<const cache::Key> keys) {
  if (keys.empty()) return;
  if (const auto index = open_index(where))
    for (const cache::Key& key : keys) index->remove(key);
}

std::uint64_t size_limit(const std::string& max_size, const Config& config) {
  if (max_size.empty()) {
    if (config.cache_max_size > 0) return config.cache_max_size;
    throw Error("kiln cache gc: no size to fit in: pass --max-size SIZE or set KILN_CACHE_MAX_SIZE (e.g. 500M, 2G)");
  }
  const std::optional<std::uint64_t> bytes = cache::parse_byte_size(max_size);
  if (!bytes) {
    throw Error("kiln cache gc: --max-size '" + max_size +
                "': not a size (bytes, or a number with K, M, G or T, powers of 1024: 500M, 1.5G)");
  }
  return *bytes;
}

void collect_garbage(const std::string& max_size) {
  const Config config = Config::from_env();
  const std::uint64_t limit = size_limit(max_size, config);
  const CacheLocation where = locate(config);
  // Recency from the index, which notes every hit; entries it lacks count from their files' times.
  cache::LastUsed last_used;
  for (const auto& [_, record] : index_records(where)) {
    last_used.emplace(record.key, std::chrono::sys_seconds(std::chrono::seconds(record.last_used)));
  }
  const base::Result<cache::GcResult> collected = cache::gc(open_store(config), limit, last_used);
  if (!collected) throw Error("kiln cache gc: " + collected.error().message);
  const cache::GcResult& result = *collected;
  forget(where, result.removed_keys);
  std::printf("removed %zu entries (%llu bytes) from %s; %llu bytes left (limit %llu)\n", result.removed,
              static_cast<unsigned long long>(result.bytes_freed), where.dir.c_str(),
              static_cast<unsigned long long>(result.bytes_left), static_cast<unsigned long long>(limit));
}

void verify_cache() {
  const Config config = Config::from_env();
  const CacheLocation where = locate(config);
  const base::Result<cache::VerifyResult> verified = cache::verify(open_store(config));
  if (!verified) throw Error("kiln cache verify: " + verified.error().message);
  const cache::VerifyResult& result = *verified;
  forget(where, result.removed_keys);
  for (const base::Failure& problem : result.problems) std::printf("bad entry: %s\n", problem.message.c_str());
  std::printf("verified %s: %zu checked, %zu bad, %zu removed, %zu orphaned temporaries removed\n",
              where.dir.c_str(), result.checked, result.bad, result.removed, result.temporaries_removed);
}

// Rebuilds even a healthy index: the entries are the truth, so this is also
// the way to drop records whose entries went behind kiln's back.
void reindex() {
  const Config config = Config::from_env();
  const CacheLocation where = locate(config);
  if (where.index.empty()) throw Error("kiln cache reindex: the index is off (KILN_INDEX_PATH=off)");
  const base::Result<cache::RebuildResult> rebuilt = cache::rebuild_index(where.index, open_store(config));
  if (!rebuilt) throw Error("kiln cache reindex: " + rebuilt.error().message);
  const cache::RebuildResult& result = *rebuilt;
  std::printf("reindexed %s: %zu records (%zu without metadata), %zu entries skipped\n", where.index.c_str(),
              result.records, result.without_metadata, result.skipped);
}

void export_manifest(const std::string& output) {
  const std::string json = manifest_json(manifest_of_cache(Config::from_env()));
  if (output.empty() || output == "-") {
    std::fputs(json.c_str(), stdout);
    return;
  }
  std::ofstream file(output);
  file << json;
  if (!file) throw Error("kiln cache export-manifest: cannot write " + output);
}

}  // namespace

void add_cache_commands(CLI::App& app) {
  CLI::App* cache = app.add_subcommand("cache", "Inspect or clear the kernel cache (KILN_CACHE_DIR)");
  cache->require_subcommand(1);
  cache->add_subcommand("ls", "List the entries with their kernel and specialisation")->callback(list_entries);
  cache->add_subcommand("stats", "Count entries, bytes and hits")->callback(print_stats);
  cache->add_subcommand("clear", "Remove every entry")->callback(clear_cache);
  CLI::App* gc = cache->add_subcommand("gc", "Remove least recently used entries until the cache fits a size");
  auto max_size = std::make_shared<std::string>();
  gc->add_option("--max-size", *max_size, "the size to fit in, e.g. 500M or 2G (default: KILN_CACHE_MAX_SIZE)");
  gc->callback([max_size] { collect_garbage(*max_size); });
  cache->add_subcommand("verify", "Read and check every entry; remove bad ones and orphaned temporary files")
      ->callback(verify_cache);
  cache->add_subcommand("reindex", "Rebuild the index from the entries' metadata")->callback(reindex);
  CLI::App* manifest = cache->add_subcommand(
      "export-manifest", "Write every cached (kernel, specialisation, mode, backend, arch) as JSON, for kiln warm");
  auto output = std::make_shared<std::string>();
  manifest->add_option("-o,--output", *output, "the file to write (default: standard output)");
  manifest->callback([output] { export_manifest(*output); });
}

}  // namespace kiln::tools
