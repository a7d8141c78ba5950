// What changes a cache folder (kiln/cache.hpp): verify, gc, clear and
// reindex, each over cache/'s own walk of the entries (eviction.hpp,
// index_rebuild.hpp), with the index's records of what went dropped.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "cache/eviction.hpp"
#include "cache/index_identity.hpp"
#include "cache/index_rebuild.hpp"
#include "kiln/cache.hpp"
#include "kiln/errors.hpp"
#include "runtime/admin/cache_impl.hpp"

namespace kiln {

CacheVerifyReport Cache::verify() {
  const Impl& c = *impl_;
  // The index is judged before anything is removed, but opened (and so
  // made, where missing) only when records must go.
  if (!c.index_path.empty() && !read_only())
    if (const base::Result<void> claimed = cache::claim_index_path(c.index_path); !claimed)
      throw Error(claimed.error().message);
  base::Result<cache::VerifyResult> verified = cache::verify(c.store);
  if (!verified) throw Error(verified.error().message);
  c.forget(verified->removed_keys);
  return {.checked = verified->checked, .bad = verified->bad, .removed = verified->removed, .odd = verified->odd,
          .temporaries_removed = verified->temporaries_removed, .problems = messages_of(verified->problems),
          .removed_keys = hex_of(verified->removed_keys)};
}

CacheGcReport Cache::gc(std::uint64_t max_bytes, std::optional<std::chrono::seconds> max_age) {
  const Impl& c = *impl_;
  std::optional<std::chrono::sys_seconds> used_before;
  if (max_age) {
    if (max_age->count() < 0)
      throw ArgumentError("kiln: cache gc: max_age " + std::to_string(max_age->count()) + " s: not an age");
    used_before = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()) - *max_age;
  }
  // Recency from the index, which notes every hit; entries it lacks count from their files' times.
  cache::LastUsed last_used;
  if (const cache::Index* index = c.index())
    for (const cache::IndexRecord& record : index->list())
      last_used.emplace(record.key, std::chrono::sys_seconds(std::chrono::seconds(record.last_used)));
  const base::Result<cache::GcResult> collected = cache::gc(c.store, max_bytes, last_used, used_before);
  if (!collected) throw Error(collected.error().message);
  c.forget(collected->removed_keys);
  return {.limit = max_bytes, .max_age = max_age, .removed = collected->removed, .bytes_freed = collected->bytes_freed,
          .bytes_left = collected->bytes_left, .removed_keys = hex_of(collected->removed_keys),
          .failures = messages_of(collected->failures)};
}

CacheClearReport Cache::clear() {
  const Impl& c = *impl_;
  c.require_writable("clear it");
  // The index first (its journal folded in): a path at someone else's file
  // stops the clear before anything is removed.
  cache::Index* index = c.index();
  std::vector<base::Failure> failures;
  const std::size_t removed = c.store.clear(&failures);
  if (index != nullptr) {
    if (failures.empty()) {
      index->clear();
    } else {  // only the records of what went: those of the entries left stay
      std::vector<cache::Key> gone;
      for (const cache::IndexRecord& record : index->list()) {
        std::error_code ignored;
        if (!std::filesystem::exists(c.store.entry_path(record.key), ignored)) gone.push_back(record.key);
      }
      c.forget(gone);
    }
  }
  return {.removed = removed, .failures = messages_of(failures)};
}

CacheReindexReport Cache::reindex() {
  Impl& c = *impl_;
  if (c.index_path.empty()) throw Error(dir().string() + ": the index is off: nothing to rebuild");
  c.require_writable("rebuild its index");
  c.opened_index.reset();  // the file is replaced: a later use opens the new one
  const base::Result<cache::RebuildResult> rebuilt = cache::rebuild_index(c.index_path, c.store);
  if (!rebuilt) throw Error(rebuilt.error().message);
  return {.records = rebuilt->records, .without_metadata = rebuilt->without_metadata, .skipped = rebuilt->skipped};
}

}  // namespace kiln
