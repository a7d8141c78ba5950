// Keeping the cache folder within a size (least recently used entries go
// first) and checking every entry in it. Both work on the entry files alone;
// the caller drops the index records of what went (GcResult::removed_keys).
//
// Safe while other processes use the cache: an entry is removed by unlink,
// and a reader holds a descriptor and reads the whole file through it, so it
// gets the whole old entry or, opening after the unlink, a plain miss.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/failure.hpp"
#include "cache/disk_store.hpp"
#include "cache/key.hpp"

namespace kiln::cache {

// When the caller last saw each entry used (the index's last_used). An entry
// the map lacks counts from its file's modification time, which is when it
// was stored: reads do not touch the file.
using LastUsed = std::unordered_map<Key, std::chrono::sys_seconds, KeyHash>;

struct GcResult {
  std::size_t removed = 0;        // entries removed
  std::uint64_t bytes_freed = 0;  // their file sizes
  std::uint64_t bytes_left = 0;   // file sizes of the entries still there
  std::vector<Key> removed_keys;  // in the order removed, oldest first
  // Entries that had to go but stayed, one failure each, naming the file and
  // the cause (a read-only folder: EACCES or EROFS). Empty when it fits.
  std::vector<base::Failure> failures;
};

// Removes entries, least recently used first (ties: older file, then lower
// key), until the entry files of `store` add up to at most `max_bytes` and,
// with `used_before`, no entry is left that was last used before it.
// Only files shaped as entries go (entry_shape.hpp); one that is not, or
// that cannot be removed, counts as left and is named in `failures`. Fails
// without removing anything when entries must go but the store may not remove
// them: Kind::untrusted (a refused store) or Kind::read_only.
[[nodiscard]] base::Result<GcResult> gc(const DiskStore& store, std::uint64_t max_bytes,
                                        const LastUsed& last_used = {},
                                        std::optional<std::chrono::sys_seconds> used_before = std::nullopt);

struct VerifyResult {
  std::size_t checked = 0;  // entries read (an entry removed meanwhile by another process is not counted)
  std::size_t bad = 0;      // entries get() rejected: corrupt, unreadable or untrusted
  std::size_t removed = 0;  // bad entries removed: not untrusted ones, nothing in a read-only store
  std::vector<Key> removed_keys;  // so the caller can drop their index records
  std::size_t temporaries_removed = 0;
  std::vector<base::Failure> problems;  // one per bad entry, naming its file and the cause
  // What lies under an entry's name but is no regular file (DiskStore::
  // odd_files()): not read (a FIFO would block), not removed, counted in
  // `bad` and named in `problems`.
  std::size_t odd = 0;

  // Damage found and left in place: an untrusted or odd file, or a bad entry
  // that could not be removed.
  bool damage_left() const { return bad > removed; }
};

// Temporaries older than this are a killed writer's: a put() takes
// milliseconds, and even one on a slow network file system not an hour.
inline constexpr std::chrono::seconds kOrphanedTemporaryAge = std::chrono::hours(1);

// Reads and decodes every entry through DiskStore::get() (a bad entry is
// removed as get() removes it), decodes each cache bundle's table
// (bundle_format.hpp; a bad one is reported and left: the next batch of its
// kernels replaces it), reports what lies under an entry's name but
// is no regular file, then sweeps temporaries older than
// `temporaries_older_than`. Fails, checking nothing, for a refused store
// (Kind::untrusted).
[[nodiscard]] base::Result<VerifyResult> verify(const DiskStore& store,
                                                std::chrono::seconds temporaries_older_than = kOrphanedTemporaryAge);

}  // namespace kiln::cache
