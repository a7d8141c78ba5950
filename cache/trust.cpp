#include "cache/trust.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::cache {

namespace fs = std::filesystem;

namespace {

// The user's name, for a message a person reads; the uid alone when the
// password database has none (a container's foreign uid, say).
std::string user_name(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(4096);
  while (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == ERANGE && buffer.size() < (1U << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  return found != nullptr ? std::string(found->pw_name) : std::string("no user name");
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777U));
  return text;
}

void append_cause(std::string& causes, const std::string& cause) {
  if (!causes.empty()) causes += ", ";
  causes += cause;
}

}  // namespace

std::string untrusted_cause(uid_t owner, mode_t mode, uid_t user) {
  std::string causes;
  if (owner != user && owner != 0) {
    append_cause(causes, "owned by uid " + std::to_string(owner) + " (" + user_name(owner) + ")");
  }
  // World-writable says it all when the group may write too: the mode shows both.
  if ((mode & S_IWOTH) != 0) append_cause(causes, "world-writable (mode " + octal_mode(mode) + ")");
  else if ((mode & S_IWGRP) != 0) append_cause(causes, "group-writable (mode " + octal_mode(mode) + ")");
  return causes;
}

fs::path canonical_form(const fs::path& path) {
  std::error_code ec;
  fs::path form = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) form = fs::absolute(path, ec).lexically_normal();
  // "/a/b/" has an empty last component that "/a/b/c" lacks.
  if (!form.has_filename() && form.has_relative_path()) form = form.parent_path();
  return form;
}

bool lies_inside(const fs::path& path, const fs::path& folder) {
  const fs::path inner = canonical_form(path);
  const fs::path outer = canonical_form(folder);
  // Component by component: a string prefix would put "/a/bc" inside "/a/b".
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

bool lies_inside_any(const fs::path& path, std::span<const fs::path> folders) {
  // An empty entry (from "a::b") would mean the working folder: nobody meant that.
  return std::any_of(folders.begin(), folders.end(),
                     [&](const fs::path& folder) { return !folder.empty() && lies_inside(path, folder); });
}

namespace {

// What a folder on the path is, judged by its lstat.
enum class Judged {
  trusted,  // the user's or root's, writable by nobody else; or in a trusted folder
  sticky,   // others may write it, but it is sticky and the user's or root's: its next name must be theirs
  refused,
};

// `consulted`: set when the trusted folders were looked at (a walk that did
// is not remembered: see Walk below).
Judged judge(const std::string& folder, const struct stat& info, std::span<const fs::path> trusted, uid_t user,
             std::string& cause, bool& consulted) {
  cause = untrusted_cause(info.st_uid, info.st_mode, user);
  if (cause.empty()) return Judged::trusted;
  // Resolving the trusted folders is slow: only a folder that fails the owner
  // and mode check gets here. (None given: nothing of the file system read.)
  if (!trusted.empty()) consulted = true;
  if (lies_inside_any(folder, trusted)) return Judged::trusted;
  const bool owned = info.st_uid == user || info.st_uid == 0;
  if ((info.st_mode & S_ISVTX) != 0 && owned) return Judged::sticky;
  return Judged::refused;
}

base::Failure untrusted(std::string message) { return {base::Failure::Kind::untrusted, 0, std::move(message)}; }

std::string joined(const std::string& folder, const std::string& name) {
  return folder == "/" ? "/" + name : folder + "/" + name;
}

std::string parent_of(const std::string& folder) {
  const std::size_t slash = folder.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : folder.substr(0, slash);
}

}  // namespace

namespace {

// What one lstat(2) of a walk read: all that judging a name depends on (its
// identity, type, mode and owner; for a link also when it was made, since a
// link is replaced, never changed, and the new one may get the old inode).
struct Looked {
  std::string name;
  bool found = false;
  dev_t device = 0;
  ino_t inode = 0;
  mode_t mode = 0;
  uid_t owner = 0;
  timespec made{};  // links only
  off_t size = 0;   // links only: the target's length

  static Looked of(std::string name, bool found, const struct stat& info) {
    Looked out{std::move(name), found};
    if (!found) return out;
    out.device = info.st_dev;
    out.inode = info.st_ino;
    out.mode = info.st_mode;
    out.owner = info.st_uid;
    if (S_ISLNK(info.st_mode)) {
      out.made = info.st_ctim;
      out.size = info.st_size;
    }
    return out;
  }
  bool same(bool found_now, const struct stat& info) const {
    if (found_now != found) return false;
    if (!found) return true;
    if (info.st_dev != device || info.st_ino != inode || info.st_mode != mode || info.st_uid != owner) return false;
    return !S_ISLNK(mode) || (info.st_ctim.tv_sec == made.tv_sec && info.st_ctim.tv_nsec == made.tv_nsec &&
                              info.st_size == size);
  }
};

// A walk that found the path trusted, and every lstat(2) it made. Another walk
// of the same path by the same user that reads the same would judge the same
// way: the judgement is a function of what lstat(2) returned (and of the
// trusted folders, so a walk that consulted them is never remembered: their
// canonical forms may change without any name on this path changing).
struct Walk {
  std::string path;  // absolute, as given
  uid_t user = 0;
  std::vector<Looked> looked;
  bool consulted_trusted = false;
};

// The process's trusted walks, a few (one per cache folder a process opens,
// its read-only tiers and build slots: the oldest goes past kMemoWalks, so
// that a process opening folder after folder pays little for each miss).
// Looked up under a lock, checked outside it.
constexpr std::size_t kMemoWalks = 8;

class WalkMemo {
 public:
  // True when a remembered walk of (path, user) still holds: each name it
  // looked at is looked at again (a folder made writable by others, given to
  // another owner, removed, or a link swapped since is seen), one lstat(2)
  // each and nothing else.
  bool still_trusted(const std::string& path, uid_t user) {
    std::shared_ptr<const Walk> walk;
    {
      std::lock_guard lock(mutex_);
      for (const std::shared_ptr<const Walk>& w : walks_)
        if (w->user == user && w->path == path) walk = w;
    }
    if (!walk) return false;
    struct stat info {};
    for (const Looked& looked : walk->looked)
      if (!looked.same(::lstat(looked.name.c_str(), &info) == 0, info)) return false;
    return true;
  }
  void remember(Walk walk) {
    auto shared = std::make_shared<const Walk>(std::move(walk));
    std::lock_guard lock(mutex_);
    std::erase_if(walks_, [&](const auto& w) { return w->user == shared->user && w->path == shared->path; });
    if (walks_.size() >= kMemoWalks) walks_.erase(walks_.begin());
    walks_.push_back(std::move(shared));
  }
  void forget() {
    std::lock_guard lock(mutex_);
    walks_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<const Walk>> walks_;
};

WalkMemo& walk_memo() {
  static WalkMemo* memo = new WalkMemo;  // never destroyed: a Runtime may end after static destructors ran
  return *memo;
}

std::atomic<std::uint64_t> walks_done{0};

// The walk itself (check_path_trust()'s contract), recording every lstat(2)
// into `walk`.
base::Result<void> walk_path(const std::string& absolute, std::span<const fs::path> trusted, uid_t user,
                             Walk& walk) {
  walks_done.fetch_add(1, std::memory_order_relaxed);
  std::deque<std::string> pending;
  for (const fs::path& part : fs::path(absolute).relative_path()) pending.push_back(part.string());

  // `current` is always a real folder (no link in it), judged; `sticky` says
  // it was let through as a sticky folder, so the next name must be the
  // user's or root's.
  std::string current = "/";
  bool sticky = false;
  std::string cause;
  struct stat info {};
  const auto look = [&](const std::string& name) {
    const bool found = ::lstat(name.c_str(), &info) == 0;
    walk.looked.push_back(Looked::of(name, found, info));
    return found;
  };
  const auto inside_trusted = [&](const std::string& name) {
    if (!trusted.empty()) walk.consulted_trusted = true;
    return lies_inside_any(name, trusted);
  };
  // `stated`: `info` already holds the folder's lstat (a name just looked
  // at): a second lstat per folder was a third of a Runtime's start-up here.
  const auto enter = [&](const std::string& folder, bool stated = false) -> base::Result<void> {
    if (!stated && !look(folder)) return {};  // checked by the caller
    const Judged judged = judge(folder, info, trusted, user, cause, walk.consulted_trusted);
    if (judged == Judged::refused) return base::failed(untrusted(folder + ": " + cause));
    current = folder;
    sticky = judged == Judged::sticky;
    return {};
  };
  if (base::Result<void> root = enter("/"); !root) return root;
  int links = 0;
  while (!pending.empty()) {
    const std::string name = std::move(pending.front());
    pending.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      // Judged on the way down already; judged again for its sticky state.
      if (base::Result<void> up = enter(parent_of(current)); !up) return up;
      continue;
    }
    const std::string next = joined(current, name);
    if (!look(next)) return {};  // missing (kiln makes it 0700), or not ours to see
    if (sticky && info.st_uid != user && info.st_uid != 0 && !inside_trusted(next)) {
      return base::failed(untrusted(next + ": " + untrusted_cause(info.st_uid, 0, user) + ", in the sticky folder " +
                                    current + " that others may write"));
    }
    if (S_ISLNK(info.st_mode)) {
      // Followed as the kernel follows it: the target's names come next,
      // from `/` for an absolute target, else from the link's own folder.
      if (++links > 40) return {};  // ELOOP: using the path fails later with its own error
      std::string target(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 4096) + 1, '\0');
      const ssize_t length = ::readlink(next.c_str(), target.data(), target.size());
      if (length <= 0 || static_cast<std::size_t>(length) >= target.size()) return {};
      target.resize(static_cast<std::size_t>(length));
      const fs::path target_path(target);
      std::vector<std::string> parts;
      for (const fs::path& part : target_path.relative_path()) parts.push_back(part.string());
      pending.insert(pending.begin(), parts.begin(), parts.end());
      if (target_path.is_absolute()) {
        if (base::Result<void> root = enter("/"); !root) return root;
      }
      continue;
    }
    // A file: the entry at the end (judged on its descriptor), or, in the
    // middle, a path that fails later (ENOTDIR).
    if (!S_ISDIR(info.st_mode)) return {};
    if (base::Result<void> entered = enter(next, true); !entered) return entered;
  }
  return {};
}

}  // namespace

base::Result<void> check_path_trust(const fs::path& path, std::span<const fs::path> trusted, uid_t user) {
  // fs::absolute() copies even an absolute path, component list and all: a
  // sixth of a Runtime's instructions here.
  std::string absolute;
  if (path.is_absolute()) {
    absolute = path.native();
  } else {
    std::error_code ec;
    absolute = fs::absolute(path, ec).native();
    if (ec) return {};  // no working folder: using the path fails later with its own error
  }
  // A Runtime per task or per test opens the same cache again and again: its
  // path is looked at again (a changed name is walked again), not walked.
  if (walk_memo().still_trusted(absolute, user)) return {};
  Walk walk{absolute, user, {}, false};
  walk.looked.reserve(8);  // a cache path's depth, mostly
  base::Result<void> judged = walk_path(absolute, trusted, user, walk);
  if (judged && !walk.consulted_trusted) walk_memo().remember(std::move(walk));
  return judged;
}

std::uint64_t path_trust_walks() { return walks_done.load(std::memory_order_relaxed); }

void forget_path_trust() { walk_memo().forget(); }

base::Result<void> check_folder_trust(const fs::path& folder, std::span<const fs::path> trusted, uid_t user) {
  return check_path_trust(folder, trusted, user);
}

ShardTrust::ShardTrust(std::vector<fs::path> trusted, uid_t user, bool folder_checked)
    : trusted_(std::move(trusted)), user_(user), folder_checked_(folder_checked) {}

namespace {

// 0-255 from a shard's two lower-case hex digits; -1 for any other name.
int shard_number(const std::string& name) {
  const auto digit = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  if (name.size() != 2 || digit(name[0]) < 0 || digit(name[1]) < 0) return -1;
  return digit(name[0]) * 16 + digit(name[1]);
}

}  // namespace

std::string ShardTrust::refusal(const fs::path& entry) const {
  const fs::path shard = entry.parent_path();
  const int number = shard_number(shard.filename().string());
  std::atomic<std::uint64_t>* word = number >= 0 ? &known_->shards[static_cast<std::size_t>(number) / 64] : nullptr;
  const std::uint64_t bit = std::uint64_t{1} << (static_cast<unsigned>(number) % 64);
  if (word != nullptr && (word->load(std::memory_order_relaxed) & bit) != 0) return {};  // the warm path
  struct stat info {};
  if (::lstat(shard.c_str(), &info) != 0) return {};  // no shard: no entry in it either
  // The cache folder and those above were judged: a plain folder of the
  // user's is all there is to check.
  if (!folder_checked_ || !S_ISDIR(info.st_mode) || !untrusted_cause(info.st_uid, info.st_mode, user_).empty()) {
    const base::Result<void> checked = check_path_trust(shard, trusted_, user_);
    if (!checked) return checked.error().message;
  }
  if (word != nullptr) word->fetch_or(bit, std::memory_order_relaxed);
  return {};
}

}  // namespace kiln::cache
