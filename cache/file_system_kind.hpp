// Which file system a folder lives on, as far as SQLite cares: WAL mode needs
// shared memory (mmap of a -shm file) and working locks, which network file
// systems do not give reliably.
#pragma once

#include <filesystem>
#include <string_view>

namespace kiln::cache {

// "nfs", "lustre", "gpfs", "cifs", "smb2"; empty for a local file system or
// when statfs fails (then WAL is tried, and SQLite reports if it cannot).
std::string_view network_file_system_name(const std::filesystem::path& folder);

}  // namespace kiln::cache
