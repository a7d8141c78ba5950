// DiskStore's whole-folder walks. Only names kiln writes are touched: the
// cache folder may also hold the index, a lock file or a user's notes.
#include <system_error>

#include "base/log.hpp"
#include "cache/atomic_file.hpp"
#include "cache/disk_store.hpp"

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

// Also removes temporaries, including those of a put() in flight in another
// process: that put() then fails cleanly at its rename, as a cleared cache may.
std::size_t DiskStore::clear() const {
  if (options_.read_only) {
    base::log().warn("kiln cache: not clearing {}: the store is read-only", dir_.string());
    return 0;
  }
  std::size_t removed = 0;
  for_each_shard_file(dir_, [&](const fs::directory_entry& file, const std::string& shard) {
    const std::string name = file.path().filename().string();
    Key key;
    const bool is_entry = parse_entry_name(shard, name, key);
    if (!is_entry && !parse_entry_name(shard, temp_target_name(name), key)) return;
    std::error_code ec;
    if (!file.is_regular_file(ec)) return;  // a folder under our name is not ours to delete
    if (fs::remove(file.path(), ec) && is_entry) ++removed;
    if (ec) base::log().warn("kiln cache: cannot remove {}: {}", file.path().string(), ec.message());
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
