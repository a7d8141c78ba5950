// The runtime's view of the on-disk cache: the read-only tiers (a cache
// shipped with an application, searched first), the writable tier, its SQLite
// index (opened only when something must be queried or folded) and the
// index's journal (what a process stored and hit, appended at its end).
// Stores opaque bytes under keys; knows nothing of compilers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/disk_store.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index.hpp"
#include "cache/index_record.hpp"
#include "cache/key.hpp"
#include "kiln/runtime.hpp"
#include "runtime/metrics/metrics.hpp"

namespace kiln::runtime {

class CacheTiers {
 public:
  // A tier whose folder is not trusted (another user's, or writable by
  // others) is refused with an error naming it and the cause, and the run
  // goes on without it: whoever can write a cache can run code in this process.
  CacheTiers(const Config& config, Metrics& metrics);
  CacheTiers(const CacheTiers&) = delete;
  CacheTiers& operator=(const CacheTiers&) = delete;

  // False without a writable tier (KILN_CACHE_DISABLE, a refused folder):
  // nothing is stored and builds take no build lock.
  bool writable() const { return store_.has_value(); }
  // The writable tier's lock file and entry file of `key` (writable() only).
  std::filesystem::path lock_path(const cache::Key& key) const { return store_->lock_path(key); }
  std::filesystem::path entry_path(const cache::Key& key) const { return store_->entry_path(key); }

  // The entry from a tier (read-only ones first), verified; the time goes to
  // `metrics_name`'s disk_lookup. A hit names the entry file and holds it
  // open, for the CPU loader to map.
  cache::LookupResult lookup(const cache::Key& key, const std::string& metrics_name);
  // lookup() of an entry the caller maps anyway (a bundle): the tiers in the
  // same order, each entry mapped by `map` and verified in that mapping
  // (cache::DiskStore::get_mapped). `unmapped` when a tier's entry could not
  // be mapped: the caller then falls back to lookup().
  cache::MappedLookup lookup_mapped(const cache::Key& key, const std::string& metrics_name,
                                    const cache::EntryMapper& map);
  // Its payload alone.
  std::optional<std::vector<char>> read(const cache::Key& key, const std::string& metrics_name);
  // Stores the binary with its index record (the entry carries it, so a lost
  // index can be rebuilt) and how it was built (`kiln cache show`), and
  // journals the record. A folder that cannot take it
  // warns once (warn_once()) and the run goes on with in-memory kernels.
  // Returns the entry's path when stored.
  std::optional<std::filesystem::path> store(const cache::IndexRecord& record, const cache::BuildRecipe& recipe,
                                             std::span<const char> binary);
  // The records of every entry, in any tier, of kernel `kernel` with the
  // specialisation `specialisation` (JSON text), whatever their key: what a
  // miss explains itself with (the entry is there for another target). Reads
  // every entry's last bytes: for error messages, never on a hit.
  std::vector<cache::IndexRecord> records_of(const std::string& kernel, const std::string& specialisation) const;
  // Stores a cache bundle (runtime/resolve/bundles.hpp) with its index
  // record, as store() does an entry, timed under no kernel. False when not
  // stored (logged at debug level: the batch's kernels are loaded already).
  bool store_bundle(const cache::IndexRecord& record, std::span<const char> payload);
  // A hit of this process, noted in the journal when the runtime ends.
  void note_hit(const cache::Key& key);

  // One warning per Runtime about the cache folder: a read-only or full
  // folder fails the build lock and the store alike.
  void warn_once(const std::string& message);

  // At the Runtime's end: the hits into the journal; after stores, orphaned
  // temporaries go and KILN_CACHE_MAX_SIZE is applied.
  void finish();

 private:
  cache::Index* open_index();  // folds the journal in when it opens the index
  std::filesystem::path index_path() const;
  std::optional<std::filesystem::path> journal() const;
  void after_append(std::uint64_t journal_size);
  base::Result<void> put_and_journal(const cache::IndexRecord& record, std::span<const char> payload,
                                     const std::string& metadata);
  void tidy();

  const Config& config_;
  Metrics& metrics_;
  std::vector<cache::DiskStore> read_only_;  // searched first, never written
  std::optional<cache::DiskStore> store_;    // the writable tier

  std::mutex mutex_;  // guards everything below
  std::unique_ptr<cache::Index> index_;
  std::vector<cache::Key> hits_;
  bool stored_ = false;
  bool warned_ = false;
};

}  // namespace kiln::runtime
