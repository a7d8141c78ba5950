// `kiln cache ls | stats | clear | gc | verify | reindex | export-manifest`:
// the on-disk store and its index; `show` is in cache_show.cpp.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cache_show.hpp"
#include "cli/commands.hpp"
#include "cli/manifest.hpp"
#include "kiln/cache.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::cli {
namespace {

// Runs `body`, its kiln::Error led by "kiln cache <command>: ".
template <class Body>
auto led(std::string_view command, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    throw Error("kiln cache " + std::string(command) + ": " + e.what());
  }
}

// The index's records by key; with an index that is not kiln's, an Error led by the command.
std::map<std::string, CacheRecord> index_records(const Cache& cache, std::string_view command) {
  std::map<std::string, CacheRecord> by_key;
  for (CacheRecord& record : led(command, [&] { return cache.records(); }))
    by_key.emplace(record.key, std::move(record));
  return by_key;
}

// What an entry was compiled for, short: the CPU ("x86-64-v3" for
// KILN_TARGET_CPU's, "sapphirerapids+" for a host's own CPU, whose features
// follow in the record) or the GPU ("cuda sm_90"). A cache shared by nodes of
// other CPUs needs KILN_TARGET_CPU: this column shows which entries had it.
std::string target_column(const CacheRecord& r) {
  if (r.backend != "cpu") return r.backend + " " + r.target;
  std::istringstream words(r.target);
  std::string triple, cpu, features;
  words >> triple >> cpu >> features;
  return cpu.empty() ? r.target : cpu + (features.empty() ? "" : "+");
}

void list_entries() {
  const Cache cache(Config::from_env());
  const auto records = index_records(cache, "ls");
  std::printf("%-32s %9s %6s %10s  %-18s %s\n", "key", "bytes", "hits", "compile_ms", "target",
              "kernel specialisation");
  for (const CacheEntryFile& entry : cache.entries()) {
    auto it = records.find(entry.key);
    if (it == records.end()) {
      std::printf("%-32s %9llu %6s %10s  %-18s (not in the index)\n", entry.key.c_str(),
                  static_cast<unsigned long long>(entry.file_bytes), "-", "-", "-");
      continue;
    }
    const CacheRecord& r = it->second;
    std::printf("%-32s %9llu %6lld %10.1f  %-18s %s %s\n", entry.key.c_str(),
                static_cast<unsigned long long>(entry.file_bytes), static_cast<long long>(r.hits), r.compile_ms,
                target_column(r).c_str(), r.kernel.c_str(), r.specialisation.c_str());
  }
}

void print_stats() {
  const Cache cache(Config::from_env());
  const CacheStats stats = led("stats", [&] { return cache.stats(); });
  std::printf("folder:         %s\n", stats.dir.c_str());
  std::printf("index:          %s\n", stats.index.empty() ? "(off)" : stats.index.c_str());
  std::printf("entries:        %zu\n", stats.entries);
  std::printf("bytes:          %llu\n", static_cast<unsigned long long>(stats.bytes));
  std::printf("indexed:        %zu\n", stats.indexed);
  std::printf("disk hits:      %lld\n", static_cast<long long>(stats.hits));
  std::printf("compile time:   %.1f ms (what the entries cost to build)\n", stats.compile_ms);
}

// "<first failure>" or "<first failure> (and N more)".
std::string first_of(const std::vector<std::string>& failures) {
  std::string text = failures.front();
  if (failures.size() > 1) text += " (and " + std::to_string(failures.size() - 1) + " more)";
  return text;
}

// Fails (exit status 1) when anything stays: a read-only or refused folder, a
// file that could not be removed. The index is checked first, so that a
// KILN_INDEX_PATH at someone else's file stops the command before it removes anything.
void clear_cache() {
  Cache cache(Config::from_env());
  const CacheClearReport result = led("clear", [&] { return cache.clear(); });
  if (!result.failures.empty())
    throw Error("kiln cache clear: " + first_of(result.failures) + "; removed " + std::to_string(result.removed) +
                " entries from " + cache.dir().string());
  std::printf("removed %zu entries from %s\n", result.removed, cache.dir().c_str());
}

std::uint64_t size_limit(const std::string& max_size, const Config& config) {
  if (max_size.empty()) {
    if (config.cache_max_size > 0) return config.cache_max_size;
    throw Error("kiln cache gc: no size to fit in: pass --max-size SIZE or set KILN_CACHE_MAX_SIZE (e.g. 500M, 2G)");
  }
  const std::optional<std::uint64_t> bytes = parse_byte_size(max_size);
  if (!bytes) {
    throw Error("kiln cache gc: --max-size '" + max_size +
                "': not a size (bytes, or a number with K, M, G or T, powers of 1024: 500M, 1.5G)");
  }
  return *bytes;
}

void collect_garbage(const std::string& max_size) {
  const Config config = Config::from_env();
  const std::uint64_t limit = size_limit(max_size, config);
  Cache cache(config);
  const CacheGcReport result = led("gc", [&] { return cache.gc(limit); });
  char summary[256];
  std::snprintf(summary, sizeof summary, "removed %zu entries (%llu bytes) from %s; %llu bytes left (limit %llu)",
                result.removed, static_cast<unsigned long long>(result.bytes_freed), cache.dir().c_str(),
                static_cast<unsigned long long>(result.bytes_left), static_cast<unsigned long long>(limit));
  // Entries had to go and stayed (a read-only folder): when the cache does
  // not fit for it, that is an error; when others went instead, a warning.
  if (!result.failures.empty() && !result.fits())
    throw Error("kiln cache gc: " + first_of(result.failures) + "; " + summary);
  for (const std::string& failure : result.failures) std::fprintf(stderr, "kiln cache gc: %s\n", failure.c_str());
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
  std::filesystem::path dir;
  CacheVerifyReport result;
  try {
    Cache cache(Config::from_env());
    dir = cache.dir();
    result = led("verify", [&] { return cache.verify(); });
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    throw CLI::RuntimeError(kVerifyFailed);
  }
  for (const std::string& problem : result.problems) std::printf("bad entry: %s\n", problem.c_str());
  std::printf("verified %s: %zu checked, %zu bad, %zu removed, %zu orphaned temporaries removed\n", dir.c_str(),
              result.checked, result.bad, result.removed, result.temporaries_removed);
  const int status = (result.removed > 0 ? kVerifyRepaired : 0) | (result.damage_left() ? kVerifyDamageLeft : 0);
  if (status != 0) throw CLI::RuntimeError(status);
}

// Rebuilds even a healthy index: the entries are the truth, so this is also
// the way to drop records whose entries went behind kiln's back.
void reindex() {
  Cache cache(Config::from_env());
  if (cache.index_path().empty()) throw Error("kiln cache reindex: the index is off (KILN_INDEX_PATH=off)");
  const CacheReindexReport result = led("reindex", [&] { return cache.reindex(); });
  std::printf("reindexed %s: %zu records (%zu without metadata), %zu entries skipped\n", cache.index_path().c_str(),
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
