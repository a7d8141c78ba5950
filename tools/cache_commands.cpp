// `kiln cache ls | stats | clear`: the on-disk store and its index.
#include <cstdio>
#include <ctime>
#include <map>

#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "kiln/runtime.hpp"
#include "tools/commands.hpp"

namespace kiln::tools {
namespace {

struct CacheLocation {
  std::filesystem::path dir;
  std::filesystem::path index;  // empty: no index
};

CacheLocation locate() {
  const Config config = Config::from_env();
  CacheLocation where{config.cache_dir, {}};
  if (config.index_path != "off")
    where.index = config.index_path.empty() ? config.cache_dir / "index.sqlite" : config.index_path;
  return where;
}

std::map<std::string, cache::IndexRecord> index_records(const CacheLocation& where) {
  std::map<std::string, cache::IndexRecord> by_key;
  if (where.index.empty() || !std::filesystem::exists(where.index)) return by_key;
  cache::Index index(where.index);
  for (auto& record : index.list()) by_key.emplace(record.key.hex(), std::move(record));
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
  if (!where.index.empty() && std::filesystem::exists(where.index)) cache::Index(where.index).clear();
  std::printf("removed %zu entries from %s\n", removed, where.dir.c_str());
}

}  // namespace

void add_cache_commands(CLI::App& app) {
  CLI::App* cache = app.add_subcommand("cache", "Inspect or clear the kernel cache (KILN_CACHE_DIR)");
  cache->require_subcommand(1);
  cache->add_subcommand("ls", "List the entries with their kernel and specialisation")->callback(list_entries);
  cache->add_subcommand("stats", "Count entries, bytes and hits")->callback(print_stats);
  cache->add_subcommand("clear", "Remove every entry")->callback(clear_cache);
}

}  // namespace kiln::tools
