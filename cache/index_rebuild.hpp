// Rebuilding the SQLite index from the entries, which are the truth: each
// entry's metadata block (entry_metadata.hpp) holds its record's fields, its
// file the size and the times. Used when SQLite finds the index corrupt and
// by `kiln cache reindex`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include "base/failure.hpp"
#include "cache/disk_store.hpp"
#include "cache/index.hpp"

namespace kiln::cache {

struct RebuildResult {
  std::size_t records = 0;           // entries now in the index
  std::size_t without_metadata = 0;  // of those, entries stored without metadata: only size and times known
  std::size_t skipped = 0;           // entries whose trailer or metadata did not verify or decode
};

// Deletes the index at `index_path` (a corrupt or a healthy one, so long as
// kiln made it: index_identity.hpp) with its -wal, -shm and -journal files,
// creates a fresh index there and inserts one record per entry whose trailer
// and metadata verify (created = last_used = the file's mtime, hits = 0, size =
// the payload's size). The payloads are not read. Skipped entries stay on
// disk: a get() finds and removes the bad ones.
//
// Fails, naming the path, when the file there is not kiln's index
// (Kind::invalid: nothing is removed), when the old files cannot be removed
// (the errno's kind) or no index can be written there (Kind::io).
//
// A process that still has the old file open keeps writing to its own, now
// nameless, copy: it loses those writes, as a best-effort catalogue may.
[[nodiscard]] base::Result<RebuildResult> rebuild_index(const std::filesystem::path& index_path,
                                                        const DiskStore& store);

// Opens the index at `index_path`; when SQLite finds kiln's index corrupt,
// rebuilds it from `store` once (one warning) and opens the new one. A file
// that is not kiln's index is refused (Index::refused()), never rebuilt.
// A missing index is created and filled from the entries of `store`.
// Any other failure (locked, read-only...) is left alone: the returned index
// is then unusable and says why, and nothing is deleted. Never throws for an
// index problem, never returns null.
[[nodiscard]] std::unique_ptr<Index> open_or_rebuild_index(const std::filesystem::path& index_path,
                                                           const DiskStore& store);

}  // namespace kiln::cache
