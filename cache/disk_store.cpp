#include "cache/disk_store.hpp"

#include <cstring>
#include <utility>

#include "cache/atomic_file.hpp"
#include "cache/entry_format.hpp"
#include "cache/log.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {

namespace {

// A rejected entry: say why, and remove it so that the next put() replaces it
// instead of every later get() tripping over it again.
LookupResult reject(const std::filesystem::path& path, const FileRead& file, std::string_view why) {
  LookupResult result;
  result.problem = path.string() + ": " + std::string(why);
  log().warn("kiln cache: dropping bad entry {}", result.problem);
  if (const std::string error = remove_if_same(path, file); !error.empty()) {
    log().warn("kiln cache: cannot remove bad entry: {}", error);
  }
  return result;
}

}  // namespace

DiskStore::DiskStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path DiskStore::entry_path(const Key& key) const {
  const std::string hex = key.hex();
  return dir_ / hex.substr(0, 2) / hex.substr(2);
}

std::filesystem::path DiskStore::lock_path(const Key& key) const {
  std::filesystem::path path = entry_path(key);
  path += ".lock";
  return path;
}

LookupResult DiskStore::get(const Key& key) const {
  const std::filesystem::path path = entry_path(key);
  FileRead file = read_file(path);
  switch (file.status) {
    case FileRead::Status::missing:
      return {};
    case FileRead::Status::open_failed: {
      // EACCES, EMFILE...: says nothing about the file's content, so it stays.
      LookupResult result{std::nullopt, errno_text(path, "open", file.error)};
      log().warn("kiln cache: cannot read entry {}", result.problem);
      return result;
    }
    case FileRead::Status::read_failed:
      return reject(path, file, std::string("read: ") + std::strerror(file.error));
    case FileRead::Status::ok:
      break;
  }
  const DecodedEntry decoded = decode_entry(file.bytes, key);
  if (decoded.error != EntryError::none) return reject(path, file, describe(decoded.error));
  // The payload is the buffer's tail: shift it down rather than copy it out.
  file.bytes.erase(file.bytes.begin(), file.bytes.begin() + static_cast<std::ptrdiff_t>(kHeaderSize));
  return {std::move(file.bytes), {}};
}

PutResult DiskStore::put(const Key& key, std::span<const char> payload) const {
  const std::filesystem::path path = entry_path(key);
  if (std::string error = make_folders(path.parent_path()); !error.empty()) return {false, std::move(error)};
  AtomicFile file(path);
  const auto header = encode_header(key, payload);
  // Each step does nothing once one has failed; the destructor removes the temporary.
  file.write(header) && file.write(payload) && file.commit();
  if (!file.ok()) return {false, file.error()};
  return {true, {}};
}

}  // namespace kiln::cache
