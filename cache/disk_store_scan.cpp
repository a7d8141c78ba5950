// DiskStore's whole-folder walks. Only names kiln writes are touched: the
// cache folder may also hold the index, a lock file or a user's notes.
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "base/failure.hpp"
#include "base/log.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_store.hpp"
#include "cache/entry_shape.hpp"

namespace kiln::cache {

namespace fs = std::filesystem;

namespace {

// "<2 hex>" folder + "<30 hex>" file, lower case, as entry_path() writes them.
bool parse_entry_name(const std::string& shard, std::string_view name, Key& key) {
  return shard.size() == 2 && name.size() == 30 && Key::from_hex(shard + std::string(name), key);
}

bool is_shard_folder(const fs::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  const auto lower_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  std::error_code ec;
  return name.size() == 2 && lower_hex(name[0]) && lower_hex(name[1]) && entry.is_directory(ec);
}

// Calls visit(file entry, shard name) for every file in every shard folder.
// Errors (a folder vanishing under a concurrent clear) end that walk quietly:
// both callers are best-effort catalogues.
template <typename Visit>
void for_each_shard_file(const fs::path& dir, Visit visit) {
  std::error_code ec;
  for (fs::directory_iterator shard(dir, ec), end; !ec && shard != end; shard.increment(ec)) {
    if (!is_shard_folder(*shard)) continue;
    const std::string shard_name = shard->path().filename().string();
    std::error_code inner;
    for (fs::directory_iterator file(shard->path(), inner); !inner && file != end; file.increment(inner)) {
      visit(*file, shard_name);
    }
  }
}

}  // namespace

std::vector<StoredEntry> DiskStore::list() const {
  std::vector<StoredEntry> entries;
  for_each_shard_file(dir_, [&](const fs::directory_entry& file, const std::string& shard) {
    StoredEntry entry;
    std::error_code ec;
    if (!parse_entry_name(shard, file.path().filename().string(), entry.key)) return;
    if (!file.is_regular_file(ec)) return;
    entry.file_size = file.file_size(ec);
    if (!ec) entry.modified = file.last_write_time(ec);
    if (!ec) entries.push_back(entry);  // else removed meanwhile: not an entry any more
  });
  return entries;
}

std::vector<fs::path> DiskStore::odd_files() const {
  std::vector<fs::path> odd;
  for_each_shard_file(dir_, [&](const fs::directory_entry& file, const std::string& shard) {
    Key key;
    if (!parse_entry_name(shard, file.path().filename().string(), key)) return;
    std::error_code ec;
    const fs::file_status status = file.symlink_status(ec);
    if (!ec && !fs::is_regular_file(status)) odd.push_back(file.path());
  });
  return odd;
}

// Also removes temporaries, including those of a put() in flight in another
// process: that put() then fails cleanly at its rename, as a cleared cache
// may. Only files kiln wrote go: an entry's name and its trailer (or an older
// format's header), or a temporary's name; the cache folder may be a typo.
std::size_t DiskStore::clear(std::vector<base::Failure>* failures) const {
  const auto fail = [&](base::Failure failure) {  // the caller who asks for them reports them
    if (failures != nullptr) failures->push_back(std::move(failure));
    else base::log().warn("kiln cache: {}", failure.message);
  };
  if (!refusal_.empty()) {
    fail({base::Failure::Kind::untrusted, 0, "not clearing " + refusal_});
    return 0;
  }
  if (options_.read_only) {
    fail({base::Failure::Kind::read_only, 0, "not clearing " + dir_.string() + ": the store is read-only"});
    return 0;
  }
  std::size_t removed = 0;
  for_each_shard_file(dir_, [&](const fs::directory_entry& file, const std::string& shard) {
    const std::string name = file.path().filename().string();
    Key key;
    const bool is_entry = parse_entry_name(shard, name, key);
    if (!is_entry && !parse_entry_name(shard, temp_target_name(name), key)) return;
    std::error_code ec;
    // A folder, link or FIFO under our name is not ours to delete; nor is a
    // file under an entry's name that holds no entry.
    if (!fs::is_regular_file(file.symlink_status(ec))) return;
    if (is_entry && !is_entry_shaped(file.path())) {
      base::log().warn("kiln cache: not removing {}: named as an entry but not shaped as one", file.path().string());
      return;
    }
    if (::unlink(file.path().c_str()) == 0) {
      removed += is_entry ? 1 : 0;
    } else if (errno != ENOENT) {  // ENOENT: removed meanwhile by another process
      fail(base::errno_failure(file.path(), "unlink", errno));
    }
  });
  return removed;
}

// Only temporaries named after an entry of their shard: a foreign ".tmp.x" or
// a young temporary (a put() in flight here or in another process) stays.
std::size_t DiskStore::sweep_temporaries(std::chrono::seconds older_than) const {
  if (options_.read_only || !refusal_.empty()) return 0;
  const fs::file_time_type cutoff = fs::file_time_type::clock::now() - older_than;
  std::size_t removed = 0;
  for_each_shard_file(dir_, [&](const fs::directory_entry& file, const std::string& shard) {
    Key key;
    if (!parse_entry_name(shard, temp_target_name(file.path().filename().string()), key)) return;
    std::error_code ec;
    // AtomicFile makes regular files only; a link or folder under such a name is not ours.
    if (!fs::is_regular_file(file.symlink_status(ec))) return;
    const fs::file_time_type modified = fs::last_write_time(file.path(), ec);
    if (ec || modified > cutoff) return;  // ec: gone meanwhile (its put() committed)
    if (fs::remove(file.path(), ec)) ++removed;
    if (ec) base::log().warn("kiln cache: cannot remove {}: {}", file.path().string(), ec.message());
  });
  if (removed > 0) base::log().debug("kiln cache: removed {} orphaned temporary files from {}", removed, dir_.string());
  return removed;
}

}  // namespace kiln::cache
