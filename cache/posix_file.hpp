// The cache's own POSIX file steps, over base/'s descriptor and read loop:
// folders made and synced so that they survive a crash, an entry file read
// whole with who owns it (for the trust check), and its removal only while it
// is still the file that was read. A failure names the path, the call and
// errno's meaning (base::errno_failure); nothing here throws for an I/O error.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "base/open_file.hpp"

namespace kiln::cache {

// Creates `folder` and any missing parents with mode 0700; an existing folder
// is fine. Each new folder's parent is fsync'd so the folder itself survives a
// crash. Bounded (one stat and at most one mkdir per folder of the path); a
// failure names the folder that could not be made ("<folder>: mkdir: ...").
[[nodiscard]] base::Result<void> make_folders(const std::filesystem::path& folder);

// fsync of a folder, so a rename or a new name in it is durable.
[[nodiscard]] base::Result<void> sync_folder(const std::filesystem::path& folder);

struct FileRead {
  // not_regular: a FIFO, a socket, a device: opened without blocking and not
  // read (it might never end); its type is in `mode`. (A folder is
  // read_failed, EISDIR.)
  enum class Status { ok, missing, open_failed, read_failed, not_regular };
  Status status = Status::ok;
  std::vector<char> bytes;
  int error = 0;  // errno when open_failed or read_failed
  // Which file was read, so a later removal can check it is still that one.
  dev_t device = 0;
  ino_t inode = 0;
  // Who owns the file and its mode, from the same fstat: the trust check
  // (trust.hpp) judges the very file that was read, not one that a rename
  // put in its place afterwards.
  uid_t owner = 0;
  mode_t mode = 0;
  bool has_status = false;  // false when fstat failed: owner and mode unknown
  base::OpenFile descriptor;  // still open, read-only, when read_file() was asked to keep it
};

// The whole file, read with read(2): no mmap, which turns an I/O error on a
// network file system into SIGBUS. With `keep_open`, a file read whole stays
// open in `descriptor`. Opened without blocking, and never read when it is
// a FIFO or a device: that is Status::not_regular, not a hang.
[[nodiscard]] FileRead read_file(const std::filesystem::path& path, bool keep_open = false);

// "a FIFO", "a folder", "a regular file"...: what st_mode's type is, for messages.
std::string_view file_type_name(mode_t mode);

// Unlinks `path` only while it is still the file (device, inode) that was read:
// another process may have replaced a bad entry with a good one meanwhile.
// Succeeds when removed, already gone or already replaced.
[[nodiscard]] base::Result<void> remove_if_same(const std::filesystem::path& path, dev_t device, ino_t inode);

}  // namespace kiln::cache
