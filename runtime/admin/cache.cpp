// kiln::Cache (kiln/cache.hpp): opening a cache folder, listing it, its
// index's records and its figures. Reading one entry is cache_read.cpp's;
// what changes the folder (verify, gc, clear, reindex) cache_upkeep.cpp's.
#include "kiln/cache.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "cache/byte_size.hpp"
#include "cache/index_rebuild.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "runtime/admin/cache_impl.hpp"

namespace kiln {

namespace {

// kiln's log level, as a Runtime sets it: cache/ logs what it repairs
// (a rebuilt index, an evicted entry at debug) through the one "kiln" logger.
void set_log_level(const std::string& name) {
  const auto level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off")
    throw ArgumentError("kiln: cache: log level '" + name +
                        "': expected trace, debug, info, warn, error, critical or off");
  spdlog::set_level(level);
}

std::filesystem::path index_path_of(const std::filesystem::path& dir, const std::filesystem::path& index_path) {
  if (index_path == "off") return {};
  return index_path.empty() ? dir / "index.sqlite" : index_path;
}

CacheOptions options_of(const Config& config) {
  return {.index_path = config.index_path, .trusted_dirs = config.trusted_dirs, .read_only = false,
          .log_level = config.log_level};
}

}  // namespace

Cache::Impl::Impl(std::filesystem::path dir, const CacheOptions& options)
    : store(std::move(dir), {.read_only = options.read_only, .trusted_dirs = options.trusted_dirs}),
      index_path(index_path_of(store.dir(), options.index_path)) {}

cache::Index* Cache::Impl::index() const {
  if (index_path.empty() || store.options().read_only) return nullptr;
  if (!opened_index) {
    auto index = cache::open_or_rebuild_index(index_path, store);
    if (index->refused()) throw Error(index->problem());
    opened_index = std::move(index);
  }
  return opened_index.get();
}

void Cache::Impl::forget(const std::vector<cache::Key>& keys) const {
  if (keys.empty()) return;
  if (cache::Index* open = index())
    for (const cache::Key& key : keys) open->remove(key);
}

void Cache::Impl::require_writable(std::string_view operation) const {
  if (store.options().read_only)
    throw Error(store.dir().string() + ": the cache was opened read-only: cannot " + std::string(operation));
}

CacheRecord record_of(const cache::IndexRecord& r) {
  return {.key = r.key.hex(), .kernel = r.kernel, .specialisation = r.specialisation, .backend = r.backend,
          .target = r.target, .payload_bytes = r.size, .compile_ms = r.compile_ms, .created = r.created,
          .last_used = r.last_used, .hits = r.hits, .kernel_file = r.kernel_file, .kernel_digest = r.kernel_digest};
}

std::chrono::system_clock::time_point system_time(std::filesystem::file_time_type time) {
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(std::chrono::file_clock::to_sys(time));
}

std::vector<std::string> messages_of(const std::vector<base::Failure>& failures) {
  std::vector<std::string> messages;
  messages.reserve(failures.size());
  for (const base::Failure& failure : failures) messages.push_back(failure.message);
  return messages;
}

std::vector<std::string> hex_of(const std::vector<cache::Key>& keys) {
  std::vector<std::string> hex;
  hex.reserve(keys.size());
  for (const cache::Key& key : keys) hex.push_back(key.hex());
  return hex;
}

cache::Key key_of(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  cache::Key key;
  if (!cache::Key::from_hex(lower, key))
    throw ArgumentError("kiln: cache: '" + std::string(text) + "' is not a cache key: 32 hex digits");
  return key;
}

Cache::Cache(std::filesystem::path dir, CacheOptions options) {
  if (dir.empty()) throw ArgumentError("kiln: cache: no folder given");
  set_log_level(options.log_level);
  impl_ = std::make_unique<Impl>(std::move(dir), options);
}

Cache::Cache(const Config& config) : Cache(config.cache_dir, options_of(config)) {}

std::vector<Cache> Cache::lookup_tiers(const Config& config) {
  CacheOptions options = options_of(config);
  options.read_only = true;
  std::vector<Cache> tiers;
  for (const std::filesystem::path& dir : config.read_only_tiers) tiers.emplace_back(dir, options);
  tiers.emplace_back(config.cache_dir, options);
  return tiers;
}

Cache::~Cache() = default;
Cache::Cache(Cache&&) noexcept = default;
Cache& Cache::operator=(Cache&&) noexcept = default;

const std::filesystem::path& Cache::dir() const { return impl_->store.dir(); }
const std::filesystem::path& Cache::index_path() const { return impl_->index_path; }
bool Cache::read_only() const { return impl_->store.options().read_only; }
std::filesystem::path Cache::entry_file(std::string_view key) const { return impl_->store.entry_path(key_of(key)); }

std::vector<CacheEntryFile> Cache::entries() const {
  std::vector<CacheEntryFile> files;
  for (const cache::StoredEntry& entry : impl_->store.list())
    files.push_back({entry.key.hex(), impl_->store.entry_path(entry.key), entry.file_size, system_time(entry.modified)});
  // By key: the folder's own order is the file system's.
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return files;
}

std::vector<CacheRecord> Cache::records() const {
  std::vector<CacheRecord> records;
  if (const cache::Index* index = impl_->index())
    for (const cache::IndexRecord& record : index->list()) records.push_back(record_of(record));
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return records;
}

std::string Cache::index_problem() const {
  const cache::Index* index = impl_->index();
  return index == nullptr || index->usable() ? std::string() : index->problem();
}

CacheStats Cache::stats() const {
  CacheStats stats{.dir = dir(), .index = index_path()};
  for (const cache::StoredEntry& entry : impl_->store.list()) {
    ++stats.entries;
    stats.bytes += entry.file_size;
  }
  for (const CacheRecord& record : records()) {
    ++stats.indexed;
    stats.hits += record.hits;
    stats.compile_ms += record.compile_ms;
  }
  return stats;
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) { return cache::parse_byte_size(text); }

}  // namespace kiln
