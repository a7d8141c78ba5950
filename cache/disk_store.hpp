// One file per entry under <dir>/<first 2 hex digits of the key>/<other 30>.
// Writes go to a temporary file in the same folder, are fsync'd, renamed into
// place and the folder fsync'd: readers see a whole entry or none. The entry
// files are the truth; the SQLite index (index.hpp) is only a catalogue.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "base/open_file.hpp"
#include "cache/key.hpp"
#include "cache/trust.hpp"

namespace kiln::cache {

struct LookupResult {
  std::optional<std::vector<char>> payload;  // set on a hit
  // On a miss: none when there was no entry; otherwise why there is no hit,
  // naming the path: the entry did not decode (Kind::corrupt), the store or
  // the entry is not trusted (Kind::untrusted, trust.hpp), or opening or
  // reading it failed (the errno's kind). A rejected entry is removed so the
  // next put() replaces it, unless the store is read-only, the entry is
  // untrusted (not ours to remove) or it could not be opened (its content
  // unknown).
  std::optional<base::Failure> problem;
  // The rejected entry's file is gone: removed here, or meanwhile removed or
  // replaced by another process. False for untrusted entries and read-only stores.
  bool removed = false;
  // On a hit, the entry file whose bytes were just read and verified (the
  // payload lies at its offset 0, entry_format.hpp), so that the caller can
  // map that very file (dlopen) instead of writing the payload out again.
  // Empty otherwise. kiln never modifies an entry file in place (writers
  // rename a complete file over it), so a caller opening this path sees the
  // bytes verified here, or a complete newer entry of the same key that this
  // get() did not verify, or, if the entry was removed meanwhile, fails to
  // open it and should fall back to `payload`.
  std::filesystem::path file{};
  // Which file that was (from the fstat of the descriptor read): a loader
  // that already maps `file` can tell whether its mapping is of this file.
  dev_t file_device = 0;
  ino_t file_inode = 0;
  // On a hit, that file still open (read-only): mapping it through this
  // descriptor maps the very bytes verified, whatever renames happened since.
  base::OpenFile descriptor{};
};

// An entry file get_mapped() opened (read-only) and judged trusted, not yet read.
struct OpenedEntry {
  const std::filesystem::path& path;
  int descriptor;
  dev_t device;
  ino_t inode;
  std::uint64_t size;
};

// How get_mapped()'s caller maps an opened entry: the whole file, readable,
// through its descriptor (a mapping it may have made before of the same
// device, inode and size will do). An empty span when it cannot.
using EntryMapper = std::function<std::span<const char>(const OpenedEntry&)>;

// get_mapped()'s answer: LookupResult's, with the payload inside the caller's mapping.
struct MappedLookup {
  // On a hit: the payload, verified in the mapping itself, so the bytes
  // checked are the bytes that will run from it (no copy read beside it).
  std::optional<std::span<const char>> payload;
  std::optional<base::Failure> problem;  // as LookupResult's
  bool removed = false;                  // as LookupResult's
  // The mapper could not map the file (a noexec mount...), or it is no
  // regular file or could not be opened: nothing was checked; get() says why.
  bool unmapped = false;
  std::filesystem::path file{};  // on a hit, as LookupResult's
  dev_t file_device = 0;
  ino_t file_inode = 0;
};

// An entry's metadata and its payload's size, from the file's last bytes,
// trailer and metadata verified.
struct MetadataRead {
  std::string metadata;  // empty when it was stored without
  std::uint64_t payload_size = 0;
};

struct StoredEntry {
  Key key;
  std::uint64_t file_size = 0;
  std::filesystem::file_time_type modified;
};

struct StoreOptions {
  // Never write or remove anything: put() fails, a bad entry stays (a shared
  // or shipped cache, or one on a read-only mount).
  bool read_only = false;
  // Folders whose entries are loaded whoever owns them and whoever may write
  // them (trust.hpp); compared by canonical path, component by component.
  std::vector<std::filesystem::path> trusted_dirs;
};

// Thread-safe, and safe to share between processes: after construction it
// holds only constant state, and every change to the folder is one atomic
// rename or unlink.
//
// Trust: whoever can write the cache runs code in every process that loads
// from it. The folder and every folder above it are checked once here (see
// refusal()), each shard folder on its first use (ShardTrust), and every entry
// file at each get(), on the descriptor it is read through (trust.hpp).
class DiskStore {
 public:
  // Nothing is created until the first put(); folders are created 0700.
  // Costs one lstat(2) per component of `dir`'s path (check_path_trust), and
  // with trusted_dirs given, resolving them and `dir` once (so that entries
  // of a trusted folder cost nothing more).
  explicit DiskStore(std::filesystem::path dir, StoreOptions options = {});

  const StoreOptions& options() const { return options_; }
  // Empty when the folder is trusted (or missing); otherwise why not, naming
  // the folder and the cause. A refused store never loads: get() is a miss
  // carrying this text, put() fails with it, and nothing is removed.
  const std::string& refusal() const { return refusal_; }

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(const Key& key) const;
  // The key's build lock file (build_lock.hpp): the entry's path plus ".lock".
  std::filesystem::path lock_path(const Key& key) const;

  [[nodiscard]] LookupResult get(const Key& key) const;
  // get() without reading the file: it is opened, judged as get() judges it,
  // mapped by `map` and its trailer, metadata and payload checked in that
  // mapping (a bad entry is removed as get() removes it). For a large entry
  // that is mapped anyway (a bundle): no copy, no buffer to zero and fault in.
  [[nodiscard]] MappedLookup get_mapped(const Key& key, const EntryMapper& map) const;
  // Never leaves a partial file behind: on any failure (disk full, read-only
  // folder...) the temporary file is removed and the failure returned, naming
  // the path: its kind is the errno's, or untrusted for a refused store,
  // read_only for a read-only one, invalid for metadata over its limit.
  // The file holds the payload, then `metadata` (at most kMaxMetadataSize
  // bytes, opaque, for read_metadata()), then the trailer (entry_format.hpp).
  [[nodiscard]] base::Result<void> put(const Key& key, std::span<const char> payload,
                                       std::string_view metadata = {}) const;
  // The entry's metadata from the file's last bytes (disk_store_head.cpp):
  // trailer, key and metadata are verified and the file's size is compared with
  // the declared sizes, but the payload is not read. None when there is no
  // entry; a failure (Kind::corrupt, or the errno's kind) names the path. A
  // bad entry is left in place: get() is what removes it.
  [[nodiscard]] base::Result<std::optional<MetadataRead>> read_metadata(const Key& key) const;

  // Every well-named entry file (not verified); temporary files are skipped.
  std::vector<StoredEntry> list() const;
  // What lies under an entry's name but is no regular file (a FIFO, a folder,
  // a link, a device): never kiln's, never removed; verify() reports them.
  std::vector<std::filesystem::path> odd_files() const;
  // Removes every entry (named as one and shaped as one, entry_shape.hpp)
  // and temporary file; returns how many entries went. A read-only or refused
  // store removes nothing and returns 0. `failures`, when given, receives why
  // something stays: the store's refusal or read-only state, or one failure
  // per file that could not be removed (naming it and the cause).
  std::size_t clear(std::vector<base::Failure>* failures = nullptr) const;
  // Removes kiln's own temporary files (AtomicFile's, in the shard folders)
  // last modified at least `older_than` ago: a killed writer leaves them.
  // Returns how many went; 0 for a read-only or refused store.
  std::size_t sweep_temporaries(std::chrono::seconds older_than) const;

 private:
  // Empty when the file read (its owner and mode) may be loaded.
  std::string entry_refusal(const std::filesystem::path& path, uid_t owner, mode_t mode) const;
  // entry_refusal() and the shard's trust, logged: why the file read may not be loaded.
  std::optional<base::Failure> trust_problem(const std::filesystem::path& path, uid_t owner, mode_t mode) const;

  std::filesystem::path dir_;
  StoreOptions options_;
  uid_t user_;  // the effective user, asked once
  bool in_trusted_dir_ = false;  // dir_ lies in one of options_.trusted_dirs
  std::string refusal_;
  ShardTrust shards_;  // the shard folders' trust, each judged once (trust.hpp)
};

}  // namespace kiln::cache
