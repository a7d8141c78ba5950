#include "cache/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

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

base::Result<void> make_folders(const std::filesystem::path& folder) {
  if (!folder.empty() && !folder.has_filename()) return make_folders(folder.parent_path());  // "a/b/"
  if (::mkdir(folder.c_str(), kFolderMode) == 0) return sync_folder(folder.parent_path());
  const int error = errno;
  if (error == EEXIST) {
    if (is_folder(folder)) return {};
    return failed(errno_failure(folder, "mkdir", ENOTDIR));
  }
  const std::filesystem::path parent = folder.parent_path();
  if (error != ENOENT || parent.empty() || parent == folder) return failed(errno_failure(folder, "mkdir", error));
  // A racing process may have made it by now: EEXIST is fine.
  return make_folders(parent).and_then([&] { return make_folders(folder); });
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
FileRead read_file(const std::filesystem::path& path, bool keep_open) {
  FileRead result;
  base::OpenFile file(path, O_RDONLY | O_NOFOLLOW);
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
    const base::Result<void> read = base::read_to_end(fd, static_cast<std::size_t>(info.st_size), result.bytes);
    if (!read) result.error = read.error().error_number;
  }
  if (result.error != 0) result.status = FileRead::Status::read_failed;
  if (keep_open && result.error == 0) result.descriptor = std::move(file);
  return result;  // else closed here: read-only, a failing close loses nothing
}

base::Result<void> remove_if_same(const std::filesystem::path& path, const FileRead& read) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return {};
    return failed(errno_failure(path, "lstat", errno));
  }
  if (info.st_dev != read.device || info.st_ino != read.inode) return {};  // already replaced
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return failed(errno_failure(path, "unlink", errno));
  return {};
}

}  // namespace kiln::cache
