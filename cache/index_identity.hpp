// Which file kiln may treat as its index. KILN_INDEX_PATH may name any file
// (a typo: ~/.bashrc, /etc/passwd as root), so kiln opens, rebuilds, removes
// or writes beside (the journal, SQLite's -wal and -shm) only a file it can
// prove it made: a SQLite database stamped with kiln's application id, which
// kiln sets when it creates an index. An index made by an earlier kiln, which
// set none, is recognised by its exact schema and then stamped (Index::open).
// Anything else is refused with a message naming the path, and left untouched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "base/failure.hpp"

namespace kiln::cache {

// "KILN": PRAGMA application_id of every index kiln creates (SQLite's header,
// bytes 68 to 71, big endian).
inline constexpr std::int32_t kIndexApplicationId = 0x4b494c4e;

struct IndexFile {
  enum class Kind {
    absent,     // nothing at the path: kiln may create its index there
    kiln,       // a SQLite database with kiln's application id
    unstamped,  // a SQLite database with no application id: an earlier kiln's
                // index, or anyone's database; only its schema can tell
    refused,    // anything else (`why` says what): never opened, written or removed
  };
  Kind kind = Kind::absent;
  std::string why;  // for refused: what the file is, e.g. "not a SQLite database"
  // For refused: errno when the file could not be inspected at all (stat,
  // open or read failed: EACCES, ENOTDIR...), 0 when it was and is not kiln's.
  int error = 0;
};

// Judges the file at `path` from its type and its first 100 bytes (SQLite's
// header), without SQLite: opened without following a final link's absence
// (a dangling link is refused), without blocking (a FIFO is refused) and
// only read.
IndexFile inspect_index_file(const std::filesystem::path& path);

// The message for a refused index file: names the path, says what it is and
// that kiln leaves it untouched.
std::string refusal_of_index(const std::filesystem::path& path, const std::string& why);

// Succeeds when kiln may create, rebuild or write beside an index at `path`:
// nothing is there, or it is kiln's index (an earlier kiln's is recognised by
// its schema and stamped here, which opens SQLite). Otherwise fails,
// changing nothing: Kind::invalid with refusal_of_index()'s message for a file
// that is not kiln's, the errno's kind for one that could not be inspected.
[[nodiscard]] base::Result<void> claim_index_path(const std::filesystem::path& path);

}  // namespace kiln::cache
