// Cache hits, noted cheaply. Every warm process hits entries, and writing
// that into the SQLite index as it ends (open, WAL set-up, a transaction,
// a checkpoint) cost ~0.5 ms: more than resolving all its kernels. So a
// process appends its hits to a journal beside the index, `<index>.hits`, in
// one write, and whoever opens the index next (a compile, `kiln cache ls`,
// eviction) folds the journal into it (Index's constructor).
//
// Records are 32 bytes: key (high, low), unix time, XXH3-64 of those 24
// bytes, little endian. Appenders hold a shared flock for their one write;
// folding holds it exclusively while it reads and empties the file, so no
// hit is lost in between. A torn or garbled record is skipped when folding.
// Hits are statistics: a crash between emptying the journal and writing the
// index loses them, never an entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "cache/key.hpp"

namespace kiln::cache {

// Above this size, an appender folds the journal itself (nobody opened the
// index for a long time): it never grows without bound.
inline constexpr std::uint64_t kHitJournalFoldSize = 256 * 1024;

std::filesystem::path hit_journal_path(const std::filesystem::path& index_path);

struct Hit {
  Key key;
  std::int64_t when = 0;  // unix seconds
};

// Appends one record per hit, in one write. Returns the journal's size after
// the write (0 when nothing could be written: logged at debug level only,
// statistics are not worth a warning).
std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Hit> hits);
// The same, one hit per key, stamped now.
std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Key> keys);

struct TakenHits {
  std::vector<Hit> hits;
  std::uint64_t skipped = 0;  // torn or garbled records
};

// Reads every record and empties the journal, under its exclusive lock. A
// missing journal gives nothing.
TakenHits take_hits(const std::filesystem::path& journal);

}  // namespace kiln::cache
