#include "cache/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "base/failure.hpp"
#include "base/posix_io.hpp"

namespace kiln::cache {

using base::errno_failure;
using base::failed;

namespace {

constexpr mode_t kFolderMode = 0700;  // binaries of one user, not for others to swap

bool is_folder(const std::filesystem::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

}  // namespace

// Iterative and bounded: one stat per folder up to the nearest that exists,
// then one mkdir per missing folder, top down. A folder that cannot be made
// although its parent exists (mkdir in /proc says ENOENT) is a failure naming
// it, never a retry: retrying there recursed until the stack overflowed.
base::Result<void> make_folders(const std::filesystem::path& folder) {
  std::filesystem::path target = folder;
  while (!target.empty() && !target.has_filename()) target = target.parent_path();  // "a/b/" is "a/b"
  std::vector<std::filesystem::path> missing;  // deepest first
  for (std::filesystem::path at = target; !at.empty(); at = at.parent_path()) {
    struct stat info {};
    if (::stat(at.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) return failed(errno_failure(at, "mkdir", ENOTDIR));
      break;
    }
    // ENOTDIR (a file above it), EACCES, ELOOP...: said as making this folder failing.
    if (errno != ENOENT) return failed(errno_failure(at, "mkdir", errno));
    missing.push_back(at);
    if (at.parent_path() == at) break;  // the root, missing: nothing above it to make
  }
  for (auto at = missing.rbegin(); at != missing.rend(); ++at) {
    if (::mkdir(at->c_str(), kFolderMode) == 0) {
      if (base::Result<void> synced = sync_folder(at->parent_path()); !synced) return synced;
      continue;
    }
    const int error = errno;
    if (error == EEXIST && is_folder(*at)) continue;  // a racing process made it
    return failed(errno_failure(*at, "mkdir", error == EEXIST ? ENOTDIR : error));
  }
  return {};
}

base::Result<void> sync_folder(const std::filesystem::path& folder) {
  const std::filesystem::path path = folder.empty() ? std::filesystem::path(".") : folder;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return failed(errno_failure(path, "open", errno));
  int error = ::fsync(fd) == 0 ? 0 : errno;
  // Some file systems cannot fsync a folder and say so with EINVAL: nothing
  // more can be done there, and failing every put for it would be worse.
  if (error == EINVAL) error = 0;
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  if (error != 0) return failed(errno_failure(path, "fsync", error));
  return {};
}

// O_NOFOLLOW: kiln never writes a link, and one planted in a shard folder
// could point at any file the reader owns, which the owner check would pass.
// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
// for ever; what is not a regular file is then refused on its fstat. For a
// regular file the flag changes nothing.
FileRead read_file(const std::filesystem::path& path, bool keep_open) {
  FileRead result;
  base::OpenFile file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  const int fd = file.fd();
  if (fd < 0) {
    result.error = file.open_error();
    result.status = result.error == ENOENT ? FileRead::Status::missing : FileRead::Status::open_failed;
    return result;
  }
  struct stat info {};
  result.error = ::fstat(fd, &info) == 0 ? 0 : errno;
  if (result.error == 0) {
    result.device = info.st_dev;
    result.inode = info.st_ino;
    result.owner = info.st_uid;
    result.mode = info.st_mode;
    result.has_status = true;
    // A folder is read, and fails with EISDIR as before; a FIFO or a device
    // might never end, so it is not read at all.
    if (!S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
      result.status = FileRead::Status::not_regular;
      return result;
    }
    const base::Result<void> read = base::read_to_end(fd, static_cast<std::size_t>(info.st_size), result.bytes);
    if (!read) result.error = read.error().error_number;
  }
  if (result.error != 0) result.status = FileRead::Status::read_failed;
  if (keep_open && result.error == 0) result.descriptor = std::move(file);
  return result;  // else closed here: read-only, a failing close loses nothing
}

std::string_view file_type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFLNK: return "a symbolic link";
    default: return "a file of unknown type";
  }
}

base::Result<void> remove_if_same(const std::filesystem::path& path, dev_t device, ino_t inode) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return {};
    return failed(errno_failure(path, "lstat", errno));
  }
  if (info.st_dev != device || info.st_ino != inode) return {};  // already replaced
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return failed(errno_failure(path, "unlink", errno));
  return {};
}

}  // namespace kiln::cache
