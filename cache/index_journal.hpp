// What processes tell the index, noted cheaply: the entries they stored and
// the entries they hit. Writing either into the SQLite index as it happens
// (open, WAL set-up, a transaction, a checkpoint) cost ~0.5 ms of every warm
// process and ~2 ms of every compile. So a process appends its news to a
// journal beside the index, `<index>.journal`, in one write, and whoever
// opens the index next (`kiln cache ls`, eviction, an appender once the
// journal passes kJournalFoldSize) folds it in: Index's constructor.
//
// A record: size (u32, the whole record's bytes), kind (u8: 1 hit, 2 stored),
// 3 bytes zero, key (high, low), unix time, then for `stored` the entry's
// size (u64) and its metadata text (entry_metadata.hpp), then XXH3-64 of all
// the record's bytes before it; little endian. Appenders hold a shared flock
// for their one write; folding holds it exclusively while it reads and
// empties the file, so nothing is lost in between. A garbled record is
// skipped, and after one whose size cannot be trusted, so is the rest.
// The index is best-effort: a crash between emptying the journal and writing
// the index loses these rows and hits, never an entry (`kiln cache reindex`
// rebuilds rows from the entries).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "cache/index_record.hpp"
#include "cache/key.hpp"

namespace kiln::cache {

// Above this size, an appender folds the journal itself (nobody opened the
// index for a long time): it never grows without bound.
inline constexpr std::uint64_t kJournalFoldSize = 256 * 1024;

std::filesystem::path journal_path(const std::filesystem::path& index_path);

struct Hit {
  Key key;
  std::int64_t when = 0;  // unix seconds
};

// Append in one write and return the journal's size after it (0 when nothing
// could be written: logged at debug level only, the index is best-effort).
// Only beside kiln's index or where there is none yet (claim_index_path(),
// index_identity.hpp): beside any other file nothing is written, and the
// first refusal in a process is a warning naming the file.
// One hit per key, stamped now:
std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Key> keys);
// Hits as they are:
std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Hit> hits);
// A newly stored entry's row (created and last used: now, or record.created
// when set; hits zero):
std::uint64_t append_stored(const std::filesystem::path& journal, const IndexRecord& record);

struct TakenJournal {
  std::vector<IndexRecord> stored;  // in the order they were appended
  std::vector<Hit> hits;
  std::uint64_t skipped = 0;  // garbled or torn records
};

// Reads every record and empties the journal, under its exclusive lock. A
// missing journal gives nothing.
TakenJournal take_journal(const std::filesystem::path& journal);

}  // namespace kiln::cache
