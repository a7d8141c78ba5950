// Administration of kiln's on-disk kernel cache: what `kiln cache` does, as
// a library. List the entries and the index's records, count them, read one
// entry whole, check every entry, evict to a size, clear, rebuild the index.
//
//   kiln::Cache cache(kiln::Config::from_env());  // KILN_CACHE_DIR, KILN_INDEX_PATH, KILN_TRUSTED_DIRS
//   const kiln::CacheStats s = cache.stats();
//   const kiln::CacheGcReport gc = cache.gc(std::uint64_t{2} << 30);  // fit in 2 GiB
//
// A cache is a folder of entry files (one per key) and, beside them, an
// SQLite index: a catalogue of what each entry holds, its hits and when it
// was last used. The entry files are the truth; the index is rebuilt from
// them when it is lost or damaged (reindex()). Every operation is safe while
// Runtimes of other processes use the same cache: an entry is added and
// removed by one atomic rename or unlink.
//
// Errors are kiln::Error (kiln/errors.hpp) naming the folder or file and the
// cause: a folder kiln does not trust (owned by another user, writable by
// others: docs/manual/cache.md, "Trust"), a file at the index's path that
// kiln did not make, an operation that must write on a read-only Cache.
// Misuse (a key that is not one) is ArgumentError.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/export.hpp"

namespace kiln {

struct Config;

// One entry file, as the folder lists it (nothing read or verified).
struct CacheEntryFile {
  std::string key{};  // 32 lowercase hex digits
  std::filesystem::path file{};
  std::uint64_t file_bytes = 0;  // the binary, its metadata and the trailer
  std::chrono::system_clock::time_point stored{};  // the file's modification time: when it was stored
};

// What the cache knows about an entry beyond its file: its index record, or
// (CacheEntry::record) the same fields decoded from the entry's own metadata.
struct CacheRecord {
  std::string key{};
  // The kernel's name; " (generic)" follows for a generic build and
  // " [cuda sm_90]" for a GPU build ("update_theta_and_exner [cuda sm_90]").
  std::string kernel{};
  std::string specialisation{};  // the values compiled in, a JSON object's text
  std::string backend{};         // "cpu", "cuda" or "hip"
  // The CPU: triple, CPU name and features ("x86_64-pc-linux-gnu x86-64-v3");
  // a GPU: its architecture ("sm_90").
  std::string target{};
  std::uint64_t payload_bytes = 0;  // the binary's size
  double compile_ms = 0.0;          // what it cost to build
  std::int64_t created = 0;         // unix seconds
  std::int64_t last_used = 0;       // unix seconds: the latest hit the index noted
  std::int64_t hits = 0;            // loads from disk the index noted
  // A user kernel's (one not embedded in libkiln): the file it was
  // registered from (empty when registered as text) and its text's digest.
  std::string kernel_file{};
  std::string kernel_digest{};
};

// How an entry was built beyond its record (entries of kiln since issue 22).
struct CacheBuildRecipe {
  std::string opt_level{};    // Config::opt_level
  std::string fp_contract{};  // Config::fp_contract
  std::string target_cpu{};   // Config::target_cpu
  bool check = false;       // Config::check
  std::string compiler{};     // the compiler's identity and fixed flags
  std::string gather{};       // Config::gather; empty in entries that did not record it
};

// One entry read whole and verified (trailer, key, sizes, checksums, trust).
struct CacheEntry {
  CacheEntryFile file{};
  // From the entry's metadata: no hits, created and last_used its file's time.
  CacheRecord record{};
  std::optional<CacheBuildRecipe> recipe{};  // none in entries of kilns before issue 22
  std::vector<char> payload{};               // the binary: an object file, CUBIN, PTX or a code object
};

struct CacheStats {
  std::filesystem::path dir{};
  std::filesystem::path index{};  // empty when the index is off
  std::size_t entries = 0;      // entry files
  std::uint64_t bytes = 0;      // their sizes
  std::size_t indexed = 0;      // the index's records
  std::int64_t hits = 0;        // over the records
  double compile_ms = 0.0;      // over the records: what the entries cost to build
};

struct CacheVerifyReport {
  std::size_t checked = 0;  // entries read (one removed meanwhile by another process is not)
  std::size_t bad = 0;      // corrupt, unreadable or untrusted entries, and odd files
  std::size_t removed = 0;  // bad entries removed (never untrusted ones, nothing from a read-only Cache)
  std::size_t odd = 0;      // non-files under an entry's name (a FIFO, a folder): never kiln's, left in place
  std::size_t temporaries_removed = 0;  // killed writers' temporary files, older than an hour
  std::vector<std::string> problems{};    // one per bad entry, naming its file and the cause
  std::vector<std::string> removed_keys{};
  // Damage found and left in place: an untrusted or odd file, a bad entry that could not be removed.
  bool damage_left() const { return bad > removed; }
};

struct CacheGcReport {
  std::uint64_t limit = 0;  // the size asked for
  std::optional<std::chrono::seconds> max_age{};  // the age asked for, if any
  std::size_t removed = 0;
  std::uint64_t bytes_freed = 0;
  std::uint64_t bytes_left = 0;
  std::vector<std::string> removed_keys{};  // least recently used first
  // Entries that had to go and stayed, one each, naming the file and the
  // cause (a folder the user may not write): empty when the cache fits.
  std::vector<std::string> failures{};
  bool fits() const { return bytes_left <= limit; }
};

struct CacheClearReport {
  std::size_t removed = 0;
  std::vector<std::string> failures{};  // what stayed, one each, naming the file and the cause
};

struct CacheReindexReport {
  std::size_t records = 0;           // entries now in the index
  std::size_t without_metadata = 0;  // of those, entries stored without metadata: only size and times known
  std::size_t skipped = 0;           // entries whose trailer or metadata did not verify (left on disk)
};

struct CacheOptions {
  // The index: empty for <dir>/index.sqlite, "off" for none (Config::index_path).
  std::filesystem::path index_path{};
  // Folders whose entries are trusted whoever owns them (Config::trusted_dirs).
  std::vector<std::filesystem::path> trusted_dirs{};
  // Never write or remove anything, the index included (it is not opened:
  // opening folds in its journal, and makes or rebuilds it where needed).
  // For a shipped cache or one on a read-only mount; verify() then reports
  // bad entries without removing them, and gc(), clear() and reindex() throw.
  bool read_only = false;
  // kiln's log level (Config::log_level), one per process as a Runtime sets it.
  std::string log_level = "warn";
};

// One cache folder. Cheap to make: nothing is read until asked. The index is
// opened on first need, as a Runtime opens it (made and filled from the
// entries where missing, rebuilt where corrupt, what processes noted in its
// journal folded in), and kept open. Use one object from one thread at a
// time; any number of objects and processes may work on one folder.
//
// Where bundles of many kernels in one file join the cache, they join
// entries(), read() and verify() alike: each of these walks the folder as
// cache/ lists it.
class KILN_API Cache {
 public:
  explicit Cache(std::filesystem::path dir, CacheOptions options = {});
  // Config::cache_dir with its index_path, trusted_dirs and log_level; writable.
  explicit Cache(const Config& config);
  // Where a Runtime of `config` looks for entries, in its order: each of
  // read_only_tiers (KILN_CACHE_PATH), then cache_dir; every one read-only.
  static std::vector<Cache> lookup_tiers(const Config& config);

  ~Cache();
  Cache(Cache&&) noexcept;
  Cache& operator=(Cache&&) noexcept;

  const std::filesystem::path& dir() const;
  const std::filesystem::path& index_path() const;  // empty when the index is off
  bool read_only() const;
  // The entry file `key` would have (whether or not it exists).
  std::filesystem::path entry_file(std::string_view key) const;

  // Every entry file, by key. Reads the folder only.
  std::vector<CacheEntryFile> entries() const;
  // The index's records, by key; none when the index is off or the Cache
  // read-only. Throws Error when the file at the index's path is not kiln's
  // index. An index that cannot be opened otherwise (locked by another
  // process past the wait, a folder where it cannot be made) gives none, and
  // index_problem() says why.
  std::vector<CacheRecord> records() const;
  // Empty when the index is off, read-only or usable; otherwise why it is not.
  std::string index_problem() const;
  CacheStats stats() const;

  // The entry of `key` (32 hex digits), read whole and verified, or nullopt
  // when there is none. Throws ArgumentError for a key that is not one, and
  // Error naming the file for an entry that is corrupt, untrusted, unreadable,
  // carries no metadata or metadata that does not decode. A corrupt entry is
  // removed as a Runtime's load removes it, unless the Cache is read-only.
  std::optional<CacheEntry> read(std::string_view key) const;

  // Reads and verifies every entry; removes the bad ones (not untrusted ones,
  // nothing when read-only) and their index records, and temporary files that
  // killed writers left over an hour ago. Throws Error when the folder is not
  // trusted, or the file at the index's path is not kiln's index (checked
  // before anything is removed).
  CacheVerifyReport verify();
  // Removes entries, least recently used first (the index's last_used, else
  // the file's time), until the entry files add up to at most `max_bytes`
  // and, with `max_age`, none is left that was last used longer ago than
  // that; and their index records. A file that cannot be removed is reported
  // and the next one goes instead. Throws Error, removing nothing, when
  // entries must go and the folder is read-only or not trusted, or when the
  // index's path holds a file that is not kiln's index; ArgumentError for a
  // negative max_age.
  CacheGcReport gc(std::uint64_t max_bytes, std::optional<std::chrono::seconds> max_age = std::nullopt);
  // Removes every entry and its index record; what stays is reported (and
  // keeps its record). Throws Error, removing nothing, for a file at the
  // index's path that is not kiln's index, and for a read-only Cache.
  CacheClearReport clear();
  // Rebuilds the index from the entries' metadata (even a healthy one: the
  // way to drop records of entries that went behind kiln's back). Throws
  // Error when the index is off, the Cache read-only, the file at its path is
  // not kiln's index, or no index can be written there.
  CacheReindexReport reindex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A size as KILN_CACHE_MAX_SIZE takes it: bytes, or a number with K, M, G or
// T (powers of 1024; "B" or "iB" may follow), any case: "500M", "1.5G".
// nullopt for anything else ("1e3", "+5", " 5").
KILN_API std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace kiln
