// `kiln cache ls | stats | clear | gc | verify | reindex | export-manifest`:
// the on-disk store and its index; `show` is in cache_show.cpp.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cache/byte_size.hpp"
#include "cache/disk_store.hpp"
#include "cache/eviction.hpp"
#include "cache/index.hpp"
#include "cache/index_identity.hpp"
#include "cache/index_rebuild.hpp"
#include "cli/cache_show.hpp"
#include "cli/commands.hpp"
#include "cli/manifest.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::cli {
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
// Throws when the file at its path is not kiln's index: a command asked to
// use it says so instead of going on as if there were none.
std::unique_ptr<cache::Index> open_index(const CacheLocation& where, std::string_view command) {
  if (where.index.empty()) return nullptr;
  auto index = cache::open_or_rebuild_index(where.index, cache::DiskStore(where.dir));
  if (index->refused()) throw Error("kiln cache " + std::string(command) + ": " + index->problem());
  return index;
}

std::map<std::string, cache::IndexRecord> index_records(const CacheLocation& where, std::string_view command) {
  std::map<std::string, cache::IndexRecord> by_key;
  if (const auto index = open_index(where, command))
    for (auto& record : index->list()) by_key.emplace(record.key.hex(), std::move(record));
  return by_key;
}

// What an entry was compiled for, short: the CPU ("x86-64-v3" for
// KILN_TARGET_CPU's, "sapphirerapids+" for a host's own CPU, whose features
// follow in the record) or the GPU ("cuda sm_90"). A cache shared by nodes of
// other CPUs needs KILN_TARGET_CPU: this column shows which entries had it.
std::string target_column(const cache::IndexRecord& r) {
  if (r.backend != "cpu") return r.backend + " " + r.target;
  std::istringstream words(r.target);
  std::string triple, cpu, features;
  words >> triple >> cpu >> features;
  return cpu.empty() ? r.target : cpu + (features.empty() ? "" : "+");
}

void list_entries() {
  const CacheLocation where = locate();
  const auto records = index_records(where, "ls");
  std::printf("%-32s %9s %6s %10s  %-18s %s\n", "key", "bytes", "hits", "compile_ms", "target",
              "kernel specialisation");
  for (const auto& entry : cache::DiskStore(where.dir).list()) {
    const std::string hex = entry.key.hex();
    auto it = records.find(hex);
    if (it == records.end()) {
      std::printf("%-32s %9llu %6s %10s  %-18s (not in the index)\n", hex.c_str(),
                  static_cast<unsigned long long>(entry.file_size), "-", "-", "-");
      continue;
    }
    const cache::IndexRecord& r = it->second;
    std::printf("%-32s %9llu %6lld %10.1f  %-18s %s %s\n", hex.c_str(),
                static_cast<unsigned long long>(entry.file_size), static_cast<long long>(r.hits), r.compile_ms,
                target_column(r).c_str(), r.kernel.c_str(), r.specialisation.c_str());
  }
}

void print_stats() {
  const CacheLocation where = locate();
  const auto entries = cache::DiskStore(where.dir).list();
  std::uint64_t bytes = 0;
  for (const auto& e : entries) bytes += e.file_size;
  const auto records = index_records(where, "stats");
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

// "<first failure>" or "<first failure> (and N more)".
std::string first_of(const std::vector<base::Failure>& failures) {
  std::string text = failures.front().message;
  if (failures.size() > 1) text += " (and " + std::to_string(failures.size() - 1) + " more)";
  return text;
}

// Drops the index records of entries that are gone, so ls and stats agree with the folder.
void forget(cache::Index* index, std::span<const cache::Key> keys) {
  if (index != nullptr)
    for (const cache::Key& key : keys) index->remove(key);
}

// Fails (exit status 1) when anything stays: a read-only or refused folder, a
// file that could not be removed. The index is checked first, so that a
// KILN_INDEX_PATH at someone else's file stops the command before it removes anything.
void clear_cache() {
  const Config config = Config::from_env();
  const CacheLocation where = locate(config);
  const auto index = open_index(where, "clear");  // folds the journal in first
  std::vector<base::Failure> failures;
  const cache::DiskStore store = open_store(config);
  const std::size_t removed = store.clear(&failures);
  if (failures.empty()) {
    if (index) index->clear();
    std::printf("removed %zu entries from %s\n", removed, where.dir.c_str());
    return;
  }
  // Only the records of what went: those of the entries left stay.
  if (index) {
    std::vector<cache::Key> gone;
    for (const cache::IndexRecord& record : index->list())
      if (!std::filesystem::exists(store.entry_path(record.key))) gone.push_back(record.key);
    forget(index.get(), gone);
  }
  throw Error("kiln cache clear: " + first_of(failures) + "; removed " + std::to_string(removed) + " entries from " +
              where.dir.string());
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
  const auto index = open_index(where, "gc");
  cache::LastUsed last_used;
  if (index)
    for (const cache::IndexRecord& record : index->list())
      last_used.emplace(record.key, std::chrono::sys_seconds(std::chrono::seconds(record.last_used)));
  const base::Result<cache::GcResult> collected = cache::gc(open_store(config), limit, last_used);
  if (!collected) throw Error("kiln cache gc: " + collected.error().message);
  const cache::GcResult& result = *collected;
  forget(index.get(), result.removed_keys);
  char summary[256];
  std::snprintf(summary, sizeof summary, "removed %zu entries (%llu bytes) from %s; %llu bytes left (limit %llu)",
                result.removed, static_cast<unsigned long long>(result.bytes_freed), where.dir.c_str(),
                static_cast<unsigned long long>(result.bytes_left), static_cast<unsigned long long>(limit));
  // Entries had to go and stayed (a read-only folder): when the cache does
  // not fit for it, that is an error; when others went instead, a warning.
  if (!result.failures.empty() && result.bytes_left > limit)
    throw Error("kiln cache gc: " + first_of(result.failures) + "; " + summary);
  for (const base::Failure& failure : result.failures)
    std::fprintf(stderr, "kiln cache gc: %s\n", failure.message.c_str());
  std::printf("%s\n", summary);
}

// Exit status as fsck's, bits or'ed: 0 clean; 1 damage found and repaired
// (bad entries removed); 4 damage found and left (an untrusted entry, a FIFO or
// folder under an entry's name, an entry that could not be removed); 8 the
// check could not run (a bad KILN_* value, a refused folder, an index that is
// not kiln's).
// Orphaned temporaries removed are housekeeping, not damage: they leave 0.
constexpr int kVerifyRepaired = 1, kVerifyDamageLeft = 4, kVerifyFailed = 8;

void verify_cache() {
  CacheLocation where;
  base::Result<cache::VerifyResult> verified;
  std::unique_ptr<cache::Index> index;
  try {
    const Config config = Config::from_env();
    where = locate(config);
    // The index is judged before anything is removed, but opened (and so
    // made, where missing) only when records must go.
    if (!where.index.empty())
      if (const base::Result<void> claimed = cache::claim_index_path(where.index); !claimed)
        throw Error("kiln cache verify: " + claimed.error().message);
    verified = cache::verify(open_store(config));
    if (!verified) throw Error("kiln cache verify: " + verified.error().message);
    if (!verified->removed_keys.empty()) index = open_index(where, "verify");
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    throw CLI::RuntimeError(kVerifyFailed);
  }
  const cache::VerifyResult& result = *verified;
  forget(index.get(), result.removed_keys);
  for (const base::Failure& problem : result.problems) std::printf("bad entry: %s\n", problem.message.c_str());
  std::printf("verified %s: %zu checked, %zu bad, %zu removed, %zu orphaned temporaries removed\n",
              where.dir.c_str(), result.checked, result.bad, result.removed, result.temporaries_removed);
  const int status = (result.removed > 0 ? kVerifyRepaired : 0) | (result.damage_left() ? kVerifyDamageLeft : 0);
  if (status != 0) throw CLI::RuntimeError(status);
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
  const std::string json = manifest_json(manifest_of_cache(Config::from_env(), "kiln cache export-manifest"));
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
  cache
      ->add_subcommand("verify",
                       "Read and check every entry; remove bad ones and orphaned temporary files. Exit status: 0 "
                       "clean, 1 bad entries removed, 4 damage left in place, 8 could not check (or'ed, as fsck's)")
      ->callback(verify_cache);
  cache->add_subcommand("reindex", "Rebuild the index from the entries' metadata")->callback(reindex);
  add_cache_show_command(*cache);
  CLI::App* manifest = cache->add_subcommand(
      "export-manifest", "Write every cached (kernel, specialisation, mode, backend, arch) as JSON, for kiln warm");
  auto output = std::make_shared<std::string>();
  manifest->add_option("-o,--output", *output, "the file to write (default: standard output)");
  manifest->callback([output] { export_manifest(*output); });
}

}  // namespace kiln::cli
