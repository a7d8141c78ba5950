// Whoever can write a cache can run code in every process that loads from it:
// an entry is machine code. So a cache is trusted as OpenSSH's StrictModes
// trusts ~/.ssh: every folder on the way to an entry, from `/` down to the
// entry's shard folder, and the entry file itself, is owned by the user (or
// root) and writable by nobody else, or lies in a folder the user has said to
// trust anyway (KILN_TRUSTED_DIRS: a cache shared by a project group, say).
// Whoever may write a folder on the path can rename what lies below it and
// put a cache of their own in its place.
//
// One exception to "writable by nobody else", which OpenSSH does not make: a
// sticky folder (mode +t, like /tmp) owned by root or the user. There only the
// owner of a name (or the folder's owner, or root) may rename or remove it
// (rename(2), EPERM), so a name in it that the user or root owns cannot be
// replaced by others: it is trusted when that next name on the path is owned
// by the user or root. Without it no cache could live under /tmp or a
// scheduler's job folder, and Perl's File::Temp (safe_level HIGH) judges the
// same way.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

// Checks every folder the kernel passes through to reach `path`, from `/`
// down, as it resolves it: a symbolic link is followed (the folder holding it
// was checked, and so is every folder on the way to its target; at most 40
// links). Each folder must be trusted (untrusted_cause() empty), or a sticky
// folder owned by root or `user` whose next name on the path is owned by root
// or `user` (see above), or lie inside one of `trusted`. The last component,
// when it is not a folder (an entry file), is not judged here: entries are
// judged on the descriptor they are read through. Succeeds when all pass, or
// at the first name that does not exist (kiln creates the rest 0700) or
// cannot be looked at (EACCES: using it fails later with its own error);
// otherwise fails with Kind::untrusted, "<folder>: <cause>", naming the first
// folder that is not trusted. Costs one lstat(2) per component.
//
// A path found trusted is remembered for the process (a few paths, by user),
// with what each lstat(2) read: checking it again looks at each of those names
// once more and, when each still reads the same (device, inode, type, mode,
// owner; a link also its change time and length), succeeds without walking.
// A folder on the way made writable by others, given away, removed or
// replaced, or a link swapped, reads differently: the path is walked again
// and judged as the first time. Refusals are never remembered, nor walks that
// consulted `trusted` (their canonical forms may change with no name on this
// path changing). Thread-safe.
[[nodiscard]] base::Result<void> check_path_trust(const std::filesystem::path& path,
                                                  std::span<const std::filesystem::path> trusted, uid_t user);

// How many walks check_path_trust() made in this process (those the memo
// above answered not counted): for tests and benchmarks.
std::uint64_t path_trust_walks();
// Empties the memo (tests: a walk that must happen).
void forget_path_trust();

// A folder kiln keeps its own files in (a cache, the build slots): its whole
// path, check_path_trust().
[[nodiscard]] base::Result<void> check_folder_trust(const std::filesystem::path& folder,
                                                    std::span<const std::filesystem::path> trusted, uid_t user);

// The trust of a cache folder's shard folders (<dir>/08), each judged once:
// an entry is read only from a shard judged trusted. Made with the cache
// folder already judged: a shard is then one lstat(2) (a folder of the user's
// or root's, writable by nobody else), or, when the cache folder did not
// exist yet (another may have made it since) or the shard is not such a
// folder (a link, a trusted folder of someone else's), check_path_trust() of
// the whole path. Shards found trusted are remembered (the folders above are
// trusted: nobody else can replace them); others are judged again on each
// use. Copies share what was found. Thread-safe.
class ShardTrust {
 public:
  ShardTrust() = default;
  // `folder_checked`: the cache folder existed and its whole path was trusted.
  ShardTrust(std::vector<std::filesystem::path> trusted, uid_t user, bool folder_checked);

  // Empty when the folder holding `entry` (its parent) is trusted; otherwise
  // "<folder>: <cause>". The parent's name must be two hex digits.
  std::string refusal(const std::filesystem::path& entry) const;

 private:
  struct Known {
    std::array<std::atomic<std::uint64_t>, 4> shards{};  // bit n: shard n judged trusted
  };
  std::vector<std::filesystem::path> trusted_;
  uid_t user_ = 0;
  bool folder_checked_ = false;
  std::shared_ptr<Known> known_ = std::make_shared<Known>();
};

}  // namespace kiln::cache
