// Whoever can write a cache can run code in every process that loads from it:
// an entry is machine code. So a folder or an entry file is trusted only when
// the user itself (or root) owns it and nobody else may write it, or when it
// lies in a folder the user has said to trust anyway (a cache shared by a
// project group, say).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <span>
#include <string>

#include "base/failure.hpp"

namespace kiln::cache {

// Empty when a file or folder with this owner and mode is trusted by `user`:
// owned by `user` or by root, and neither group- nor world-writable. Otherwise
// the causes, joined by ", ": "owned by uid 1234 (alice)", then
// "world-writable (mode 0777)" or else "group-writable (mode 0775)".
std::string untrusted_cause(uid_t owner, mode_t mode, uid_t user);

// `path` made absolute, symbolic links and "." / ".." resolved as far as it
// exists (std::filesystem::weakly_canonical), without a trailing separator.
// On an error (a folder that cannot be searched), the lexically normal form.
std::filesystem::path canonical_form(const std::filesystem::path& path);

// True when `path` is `folder` or lies below it, comparing whole components
// of the two canonical forms: "/a/bc" does not lie inside "/a/b".
bool lies_inside(const std::filesystem::path& path, const std::filesystem::path& folder);

// True when `path` lies inside one of `folders` (each as the user wrote it).
bool lies_inside_any(const std::filesystem::path& path, std::span<const std::filesystem::path> folders);

// Checks the folder itself (following a symbolic link to it). Succeeds when it
// is trusted, lies inside one of `trusted`, or does not exist (kiln then
// creates it 0700); otherwise fails with Kind::untrusted, "<folder>: <cause>".
// A folder that cannot be looked at (EACCES) is not judged here: using it
// fails later with its own error.
[[nodiscard]] base::Result<void> check_folder_trust(const std::filesystem::path& folder,
                                                    std::span<const std::filesystem::path> trusted, uid_t user);

}  // namespace kiln::cache
