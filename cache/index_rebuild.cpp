#include "cache/index_rebuild.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <vector>

#include "base/failure.hpp"
#include "base/log.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index_identity.hpp"

namespace kiln::cache {

namespace {

std::int64_t unix_seconds(std::filesystem::file_time_type time) {
  const auto since_epoch = std::chrono::file_clock::to_sys(time).time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
}

// The database and every file SQLite keeps beside it: a -wal left behind
// would be replayed into the new database.
base::Result<void> remove_database(const std::filesystem::path& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string name = path.string() + suffix;
    if (::unlink(name.c_str()) != 0 && errno != ENOENT) return base::failed(base::errno_failure(name, "unlink", errno));
  }
  return {};
}

// The entry's record, or nullopt (and `skipped` counted) when the entry does
// not verify or its metadata is not a record.
std::optional<IndexRecord> record_of(const DiskStore& store, const StoredEntry& entry, RebuildResult& result) {
  const base::Result<std::optional<MetadataRead>> read = store.read_metadata(entry.key);
  if (!read) {
    ++result.skipped;
    base::log().info("kiln cache index rebuild: skipping {}", read.error().message);
    return std::nullopt;
  }
  if (!*read) return std::nullopt;  // removed since it was listed: not an entry any more
  const MetadataRead& metadata = **read;
  // No metadata: written before entries carried it, or by a caller that
  // gave none. Still indexed, so that sizes and ages count for eviction.
  std::optional<IndexRecord> record = metadata.metadata.empty() ? IndexRecord{} : decode_metadata(metadata.metadata);
  if (!record) {
    ++result.skipped;
    base::log().info("kiln cache index rebuild: skipping {}: metadata is not an index record",
                     store.entry_path(entry.key).string());
    return std::nullopt;
  }
  if (metadata.metadata.empty()) ++result.without_metadata;
  record->key = entry.key;
  record->size = metadata.payload_size;
  record->created = record->last_used = unix_seconds(entry.modified);
  record->hits = 0;
  return record;
}

// The record of every entry that verifies.
std::vector<IndexRecord> records_of(const DiskStore& store, RebuildResult& result) {
  std::vector<IndexRecord> records;
  for (const StoredEntry& entry : store.list()) {
    if (auto record = record_of(store, entry, result)) records.push_back(std::move(*record));
  }
  return records;
}

}  // namespace

base::Result<RebuildResult> rebuild_index(const std::filesystem::path& index_path, const DiskStore& store) {
  // Only kiln's own index is deleted (index_identity.hpp): KILN_INDEX_PATH may
  // name any file. A corrupt index of kiln's still carries kiln's header.
  if (base::Result<void> claimed = claim_index_path(index_path); !claimed) return base::failed(claimed.error());
  if (base::Result<void> removed = remove_database(index_path); !removed) {
    removed.error().message = "cannot remove the old index: " + removed.error().message;
    return base::failed(std::move(removed.error()));
  }
  Index index(index_path);
  RebuildResult result;
  const std::vector<IndexRecord> records = records_of(store, result);
  if (!index.usable()) return base::failed({base::Failure::Kind::io, 0, index.problem()});
  if (!index.restore(records)) {
    return base::failed({base::Failure::Kind::io, 0, index_path.string() + ": cannot write the records (see the log)"});
  }
  result.records = records.size();
  return result;
}

std::unique_ptr<Index> open_or_rebuild_index(const std::filesystem::path& index_path, const DiskStore& store) {
  std::error_code ignored;
  const bool existed = std::filesystem::exists(index_path, ignored);
  auto index = std::make_unique<Index>(index_path, 200, Index::Fold::later);
  // A missing index (deleted, or KILN_INDEX_PATH moved) is filled from the
  // entries there are, before the journal's hits are folded in (they need
  // rows). Nothing is deleted, so processes that find it missing at once all
  // insert the same records, harmlessly.
  if (!existed && index->usable()) {
    RebuildResult result;
    const std::vector<IndexRecord> records = records_of(store, result);
    if (!records.empty() && index->restore(records, Index::Existing::keep))
      base::log().info("kiln cache index {} was missing; filled from {} entries", index_path.string(), records.size());
  }
  index->fold_journal();
  if (!existed) return index;
  if (!index->corrupt()) return index;
  const std::string why = index->problem();
  index.reset();  // closes the corrupt file before it is deleted
  const base::Result<RebuildResult> rebuilt = rebuild_index(index_path, store);
  if (!rebuilt) {
    base::log().warn("kiln cache index {} is corrupt ({}) and could not be rebuilt: {}", index_path.string(), why,
                     rebuilt.error().message);
  } else {
    base::log().warn("kiln cache index {} was corrupt ({}); rebuilt from the entries: {} records, {} entries skipped",
                     index_path.string(), why, rebuilt->records, rebuilt->skipped);
  }
  return std::make_unique<Index>(index_path);
}

}  // namespace kiln::cache
