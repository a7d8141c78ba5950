#include "runtime/store/cache_tiers.hpp"

#include <chrono>

#include "cache/entry_metadata.hpp"
#include "cache/eviction.hpp"
#include "cache/file_system_kind.hpp"
#include "cache/index_journal.hpp"
#include "cache/index_rebuild.hpp"
#include "base/log.hpp"

namespace kiln::runtime {

using Clock = std::chrono::steady_clock;

CacheTiers::CacheTiers(const Config& config, Metrics& metrics) : config_(config), metrics_(metrics) {
  if (!config.use_disk_cache) return;
  const auto refused = [](const cache::DiskStore& tier) { return !tier.refusal().empty(); };  // the store said why
  for (const std::filesystem::path& dir : config.read_only_tiers) {
    cache::DiskStore tier(dir, {.read_only = true, .trusted_dirs = config.trusted_dirs});
    if (!refused(tier)) read_only_.push_back(std::move(tier));
  }
  store_.emplace(config.cache_dir, cache::StoreOptions{.read_only = false, .trusted_dirs = config.trusted_dirs});
  if (refused(*store_)) store_.reset();
}

cache::LookupResult CacheTiers::lookup(const cache::Key& key, const std::string& metrics_name) {
  const auto start = Clock::now();
  cache::LookupResult found;
  for (const cache::DiskStore& tier : read_only_) {
    if ((found = tier.get(key)).payload) break;
  }
  if (!found.payload && store_) found = store_->get(key);  // a rejected entry was logged and is rebuilt
  metrics_.record(metrics_name, "disk_lookup", ms_since(start));
  return found;
}

cache::MappedLookup CacheTiers::lookup_mapped(const cache::Key& key, const std::string& metrics_name,
                                              const cache::EntryMapper& map) {
  const auto start = Clock::now();
  cache::MappedLookup found;
  for (const cache::DiskStore& tier : read_only_) {
    if ((found = tier.get_mapped(key, map)).payload || found.unmapped) break;
  }
  if (!found.payload && !found.unmapped && store_) found = store_->get_mapped(key, map);
  metrics_.record(metrics_name, "disk_lookup", ms_since(start));
  return found;
}

std::vector<cache::IndexRecord> CacheTiers::records_of(const std::string& kernel,
                                                       const std::string& specialisation) const {
  std::vector<cache::IndexRecord> out;
  const auto scan = [&](const cache::DiskStore& tier) {
    for (const cache::StoredEntry& entry : tier.list()) {
      const auto metadata = tier.read_metadata(entry.key);
      if (!metadata || !*metadata) continue;  // unreadable or bare: nothing to say about it
      std::optional<cache::IndexRecord> record = cache::decode_metadata((*metadata)->metadata);
      if (record && record->kernel == kernel && record->specialisation == specialisation)
        out.push_back(std::move(*record));
    }
  };
  for (const cache::DiskStore& tier : read_only_) scan(tier);
  if (store_) scan(*store_);
  return out;
}

std::optional<std::vector<char>> CacheTiers::read(const cache::Key& key, const std::string& metrics_name) {
  return std::move(lookup(key, metrics_name).payload);
}

std::optional<std::filesystem::path> CacheTiers::store(const cache::IndexRecord& record,
                                                      const cache::BuildRecipe& recipe, std::span<const char> binary) {
  if (!store_) return std::nullopt;
  const auto start = Clock::now();
  const base::Result<void> put = put_and_journal(record, binary, cache::encode_metadata(record, &recipe));
  metrics_.record(record.kernel, "store", ms_since(start));
  if (!put) {
    warn_once("cannot store in the kernel cache (" + put.error().message + "); going on with in-memory kernels");
    return std::nullopt;
  }
  return store_->entry_path(record.key);
}

bool CacheTiers::store_bundle(const cache::IndexRecord& record, std::span<const char> payload) {
  if (!store_) return false;
  const base::Result<void> put = put_and_journal(record, payload, cache::encode_metadata(record));
  if (!put) base::log().debug("kiln cache: bundle not stored: {}", put.error().message);
  return put.has_value();
}

base::Result<void> CacheTiers::put_and_journal(const cache::IndexRecord& record, std::span<const char> payload,
                                               const std::string& metadata) {
  base::Result<void> put = store_->put(record.key, payload, metadata);
  if (!put) return put;
  {
    std::lock_guard lock(mutex_);
    stored_ = true;
  }
  if (const auto path = journal()) after_append(cache::append_stored(*path, record));
  return put;
}

void CacheTiers::note_hit(const cache::Key& key) {
  std::lock_guard lock(mutex_);
  hits_.push_back(key);
}

void CacheTiers::warn_once(const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (warned_) return;
    warned_ = true;
  }
  base::log().warn("{}", message);
}

std::filesystem::path CacheTiers::index_path() const {
  return config_.index_path.empty() ? config_.cache_dir / "index.sqlite" : config_.index_path;
}

cache::Index* CacheTiers::open_index() {
  if (!store_ || config_.index_path == "off") return nullptr;
  std::lock_guard lock(mutex_);
  // A corrupt index is rebuilt from the entries (once, with a warning).
  if (!index_) index_ = cache::open_or_rebuild_index(index_path(), *store_);
  return index_->usable() ? index_.get() : nullptr;
}

// The index's journal (cache/index_journal.hpp): a warm process never opens
// the index, nor does a compile. None where the index is off
// (KILN_INDEX_PATH=off, or a network file system, where nothing would ever
// fold the journal in).
std::optional<std::filesystem::path> CacheTiers::journal() const {
  if (!store_ || config_.index_path == "off") return std::nullopt;
  const std::filesystem::path path = index_path();
  if (!cache::network_file_system_name(path.parent_path()).empty()) return std::nullopt;
  return cache::journal_path(path);
}

// Past its fold size, the journal is folded in here (opening the index does).
void CacheTiers::after_append(std::uint64_t journal_size) {
  if (journal_size > cache::kJournalFoldSize) open_index();
}

// At the end of a run that stored entries: temporaries of killed writers go,
// and with KILN_CACHE_MAX_SIZE the least recently used entries (by the
// index's last use, else by when they were stored) until the folder fits.
void CacheTiers::tidy() {
  store_->sweep_temporaries(cache::kOrphanedTemporaryAge);
  if (config_.cache_max_size == 0) return;
  cache::Index* idx = open_index();
  cache::LastUsed last_used;
  if (idx)
    for (const cache::IndexRecord& r : idx->list())
      last_used.emplace(r.key, std::chrono::sys_seconds(std::chrono::seconds(r.last_used)));
  // A refused or read-only store removes nothing (its refusal was logged when it was opened).
  const cache::GcResult gc = cache::gc(*store_, config_.cache_max_size, last_used).value_or(cache::GcResult{});
  if (idx)
    for (const cache::Key& key : gc.removed_keys) idx->remove(key);
  if (gc.removed > 0)
    base::log().info("kiln cache: removed {} least recently used entries ({} bytes) to fit in {} bytes", gc.removed,
                      gc.bytes_freed, config_.cache_max_size);
}

void CacheTiers::finish() {
  std::vector<cache::Key> hits;
  bool stored = false;
  {
    std::lock_guard lock(mutex_);
    hits.swap(hits_);
    stored = stored_;
  }
  if (!hits.empty())
    if (const auto path = journal()) after_append(cache::append_hits(*path, hits));
  if (stored) tidy();
}

}  // namespace kiln::runtime
