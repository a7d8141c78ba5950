#include "cache/trust.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <deque>
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

Judged judge(const std::string& folder, const struct stat& info, std::span<const fs::path> trusted, uid_t user,
             std::string& cause) {
  cause = untrusted_cause(info.st_uid, info.st_mode, user);
  if (cause.empty()) return Judged::trusted;
  // Resolving the trusted folders is slow: only a folder that fails the owner
  // and mode check gets here.
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

base::Result<void> check_path_trust(const fs::path& path, std::span<const fs::path> trusted, uid_t user) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return {};  // no working folder: using the path fails later with its own error
  std::deque<std::string> pending;
  for (const fs::path& part : absolute.relative_path()) pending.push_back(part.string());

  // `current` is always a real folder (no link in it), judged; `sticky` says
  // it was let through as a sticky folder, so the next name must be the
  // user's or root's.
  std::string current = "/";
  bool sticky = false;
  std::string cause;
  struct stat info {};
  // `stated`: `info` already holds the folder's lstat (a name just looked
  // at): a second lstat per folder was a third of a Runtime's start-up here.
  const auto enter = [&](const std::string& folder, bool stated = false) -> base::Result<void> {
    if (!stated && ::lstat(folder.c_str(), &info) != 0) return {};  // checked by the caller
    const Judged judged = judge(folder, info, trusted, user, cause);
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
    if (::lstat(next.c_str(), &info) != 0) return {};  // missing (kiln makes it 0700), or not ours to see
    if (sticky && info.st_uid != user && info.st_uid != 0 && !lies_inside_any(next, trusted)) {
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
