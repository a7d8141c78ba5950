#include "cache/trust.hpp"

#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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

base::Result<void> check_folder_trust(const fs::path& folder, std::span<const fs::path> trusted, uid_t user) {
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) return {};  // missing: created 0700 later; unreadable: fails later
  std::string cause = untrusted_cause(info.st_uid, info.st_mode, user);
  if (cause.empty() || lies_inside_any(folder, trusted)) return {};
  return base::failed({base::Failure::Kind::untrusted, 0, folder.string() + ": " + cause});
}

}  // namespace kiln::cache
