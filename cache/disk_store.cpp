#include "cache/disk_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <utility>

#include "base/failure.hpp"
#include "base/log.hpp"
#include "cache/atomic_file.hpp"
#include "cache/entry_format.hpp"
#include "cache/posix_file.hpp"
#include "cache/trust.hpp"

namespace kiln::cache {

namespace {

// A rejected entry: say why, and remove it so that the next put() replaces it
// instead of every later get() tripping over it again. A read-only store
// leaves it: it writes nothing, and the next reader is told again.
// (device, inode): the file that was read, removed only while it still lies there.
LookupResult reject(const std::filesystem::path& path, dev_t device, ino_t inode, base::Failure why, bool read_only) {
  LookupResult result;
  result.problem = std::move(why);
  if (read_only) {
    base::log().warn("kiln cache: bad entry {} (kept: the store is read-only)", result.problem->message);
    return result;
  }
  base::log().warn("kiln cache: dropping bad entry {}", result.problem->message);
  const base::Result<void> removed = remove_if_same(path, device, inode);
  if (!removed) base::log().warn("kiln cache: cannot remove bad entry: {}", removed.error().message);
  result.removed = removed.has_value();
  return result;
}

base::Failure untrusted(std::string why) { return {base::Failure::Kind::untrusted, 0, std::move(why)}; }

}  // namespace

DiskStore::DiskStore(std::filesystem::path dir, StoreOptions options)
    : dir_(std::move(dir)), options_(std::move(options)), user_(::geteuid()) {
  in_trusted_dir_ = lies_inside_any(dir_, options_.trusted_dirs);
  // Every folder from `/` down, those above a trusted folder too: whoever may
  // write one of them can put another cache in this one's place.
  const base::Result<void> trusted = check_path_trust(dir_, options_.trusted_dirs, user_);
  struct stat info {};
  shards_ = ShardTrust(options_.trusted_dirs, user_, trusted && ::stat(dir_.c_str(), &info) == 0);
  if (trusted) return;
  refusal_ = trusted.error().message + " (not trusted)";
  base::log().error("kiln cache: {}: nothing will be loaded from or stored in it", refusal_);
}

std::string DiskStore::entry_refusal(const std::filesystem::path& path, uid_t owner, mode_t mode) const {
  if (in_trusted_dir_) return {};
  std::string cause = untrusted_cause(owner, mode, user_);  // no allocation when trusted: the warm path
  // Resolving the entry's path is slow, but only an entry that failed the
  // owner and mode check gets here: a trusted folder below the store's (a shard).
  if (cause.empty() || lies_inside_any(path, options_.trusted_dirs)) return {};
  return path.string() + ": " + cause + " (not trusted)";
}

std::optional<base::Failure> DiskStore::trust_problem(const std::filesystem::path& path, uid_t owner,
                                                      mode_t mode) const {
  if (std::string why = entry_refusal(path, owner, mode); !why.empty()) {
    base::log().warn("kiln cache: not loading {}", why);  // and not removing it: it is not ours
    return untrusted(std::move(why));
  }
  if (std::string why = shards_.refusal(path); !why.empty()) {
    why += " (not trusted)";
    base::log().warn("kiln cache: not loading {}: {}", path.string(), why);
    return untrusted(std::move(why));
  }
  return std::nullopt;
}

// Built as one string: each path operator/ re-parses its operands, a
// measurable part of a warm lookup.
std::filesystem::path DiskStore::entry_path(const Key& key) const {
  const std::string hex = key.hex();
  std::string path = dir_.native();
  if (!path.empty() && path.back() != '/') path += '/';
  path.append(hex, 0, 2).append(1, '/').append(hex, 2);
  return path;
}

std::filesystem::path DiskStore::lock_path(const Key& key) const {
  std::filesystem::path path = entry_path(key);
  path += ".lock";
  return path;
}

LookupResult DiskStore::get(const Key& key) const {
  if (!refusal_.empty()) return {std::nullopt, untrusted(refusal_)};
  const std::filesystem::path path = entry_path(key);
  FileRead file = read_file(path, /*keep_open=*/true);
  switch (file.status) {
    case FileRead::Status::missing:
      return {};
    case FileRead::Status::open_failed: {
      // EACCES, EMFILE...: says nothing about the file's content, so it stays.
      LookupResult result{std::nullopt, base::errno_failure(path, "open", file.error)};
      base::log().warn("kiln cache: cannot read entry {}", result.problem->message);
      return result;
    }
    case FileRead::Status::not_regular: {
      // A FIFO, a socket, a device: kiln writes regular files only, so it is not an
      // entry, and not kiln's to remove. A miss (never a hang) that verify reports.
      LookupResult result{std::nullopt, base::Failure{base::Failure::Kind::io, 0,
                                                      path.string() + ": " + std::string(file_type_name(file.mode)) +
                                                          ", not an entry file (left in place)"}};
      base::log().warn("kiln cache: cannot read entry {}", result.problem->message);
      return result;
    }
    case FileRead::Status::read_failed:
    case FileRead::Status::ok:
      break;
  }
  // The owner and mode come from the descriptor just read: no other file can
  // have been swapped in between the check and the bytes.
  if (file.has_status) {
    if (std::optional<base::Failure> why = trust_problem(path, file.owner, file.mode)) return {std::nullopt, why};
  }
  if (file.status == FileRead::Status::read_failed) {
    return reject(path, file.device, file.inode, base::errno_failure(path, "read", file.error), options_.read_only);
  }
  const DecodedEntry decoded = decode_entry(file.bytes, key);
  if (decoded.error != EntryError::none) {
    const std::string why = path.string() + ": " + std::string(describe(decoded.error));
    return reject(path, file.device, file.inode, {base::Failure::Kind::corrupt, 0, why}, options_.read_only);
  }
  // The payload is the buffer's head: cut the metadata and trailer off its tail.
  file.bytes.resize(decoded.payload.size());
  LookupResult hit{std::move(file.bytes), {}};
  hit.file = path;
  hit.file_device = file.device;
  hit.file_inode = file.inode;
  hit.descriptor = std::move(file.descriptor);
  return hit;
}

MappedLookup DiskStore::get_mapped(const Key& key, const EntryMapper& map) const {
  MappedLookup out;
  if (!refusal_.empty()) {
    out.problem = untrusted(refusal_);
    return out;
  }
  const std::filesystem::path path = entry_path(key);
  base::OpenFile file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (file.fd() < 0 && file.open_error() == ENOENT) return out;  // no entry: a plain miss
  struct stat info {};
  // Unopenable, unstattable, a folder, a FIFO...: get() reports each as it always has.
  if (file.fd() < 0 || ::fstat(file.fd(), &info) != 0 || !S_ISREG(info.st_mode)) {
    out.unmapped = true;
    return out;
  }
  if (std::optional<base::Failure> why = trust_problem(path, info.st_uid, info.st_mode)) {
    out.problem = std::move(why);
    return out;
  }
  const std::span<const char> bytes =
      map({path, file.fd(), info.st_dev, info.st_ino, static_cast<std::uint64_t>(info.st_size)});
  if (bytes.empty()) {
    out.unmapped = true;
    return out;
  }
  const DecodedEntry decoded = decode_entry(bytes, key);
  if (decoded.error != EntryError::none) {
    const std::string why = path.string() + ": " + std::string(describe(decoded.error));
    LookupResult rejected = reject(path, info.st_dev, info.st_ino, {base::Failure::Kind::corrupt, 0, why}, options_.read_only);
    out.problem = std::move(rejected.problem);
    out.removed = rejected.removed;
    return out;
  }
  out.payload = decoded.payload;
  out.file = path;
  out.file_device = info.st_dev;
  out.file_inode = info.st_ino;
  return out;
}

base::Result<void> DiskStore::put(const Key& key, std::span<const char> payload, std::string_view metadata) const {
  using Kind = base::Failure::Kind;
  const std::filesystem::path path = entry_path(key);
  if (!refusal_.empty()) return base::failed(untrusted(path.string() + ": not stored: " + refusal_));
  if (options_.read_only) {
    return base::failed(
        {Kind::read_only, 0, path.string() + ": not stored: the cache " + dir_.string() + " is read-only"});
  }
  if (metadata.size() > kMaxMetadataSize) {
    return base::failed({Kind::invalid, 0,
                         path.string() + ": metadata of " + std::to_string(metadata.size()) + " bytes exceeds the " +
                             std::to_string(kMaxMetadataSize) + "-byte limit"});
  }
  if (base::Result<void> made = make_folders(path.parent_path()); !made) return made;
  if (std::string why = shards_.refusal(path); !why.empty()) {
    return base::failed(untrusted(path.string() + ": not stored: " + why + " (not trusted)"));
  }
  AtomicFile file(path);
  const auto trailer = encode_trailer(key, payload, metadata);
  // Payload first (entry_format.hpp). Each step runs only when the one
  // before succeeded; on a failure the destructor removes the temporary.
  return file.write(payload)
      .and_then([&] { return file.write(metadata); })
      .and_then([&] { return file.write(trailer); })
      .and_then([&] { return file.commit(); });
}

}  // namespace kiln::cache
