#include "cache/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>

#include "base/failure.hpp"
#include "base/posix_io.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {

using base::errno_failure;

namespace {

constexpr std::string_view kTempPrefix = ".tmp.";
constexpr int kNameAttempts = 16;  // O_EXCL collisions are rare; a loop of them is an error

// Enough to keep two writers of one entry (threads or processes) apart; the
// fallback covers a kernel without getrandom.
std::uint64_t random_word() {
  std::uint64_t word = 0;
  if (::getrandom(&word, sizeof word, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof word)) return word;
  static std::atomic<std::uint64_t> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return static_cast<std::uint64_t>(now) * 0x9e3779b97f4a7c15ULL + counter.fetch_add(1);
}

std::string to_hex(std::uint64_t word) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, word >>= 4) out[static_cast<std::size_t>(i)] = kDigits[word & 0xfU];
  return out;
}

bool all_of(std::string_view text, bool (*accept)(char)) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!accept(c)) return false;
  }
  return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) { open_temp(); }

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!renamed_ && !temp_.empty()) ::unlink(temp_.c_str());  // best effort: nothing to report to
}

void AtomicFile::open_temp() {
  const std::string prefix = std::string(kTempPrefix) + target_.filename().string() + "." + std::to_string(::getpid()) + ".";
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::filesystem::path candidate = target_.parent_path() / (prefix + to_hex(random_word()));
    fd_ = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ >= 0) {
      temp_ = std::move(candidate);
      return;
    }
    if (errno != EEXIST) {
      fail(errno_failure(candidate, "open", errno));  // kept in status_
      return;
    }
  }
  fail(errno_failure(target_.parent_path(), "open (no free temporary name)", EEXIST));
}

base::Result<void> AtomicFile::write(std::span<const char> bytes) {
  if (!ok()) return status_;
  if (const base::Result<void> written = base::write_all(fd_, bytes); !written) {
    return fail(written.error().about(temp_));  // "<temp>: write: <strerror>"
  }
  return {};
}

base::Result<void> AtomicFile::commit() {
  if (!ok()) return status_;
  if (::fsync(fd_) != 0) return fail(errno_failure(temp_, "fsync", errno));
  const int fd = fd_;
  fd_ = -1;  // Linux frees the descriptor even when close fails: never close it twice
  if (::close(fd) != 0 && errno != EINTR) return fail(errno_failure(temp_, "close", errno));
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return fail(errno_failure(target_, "rename", errno));
  renamed_ = true;
  // The entry is in place now, but without this may not survive a crash.
  if (base::Result<void> synced = sync_folder(target_.parent_path()); !synced) return fail(std::move(synced.error()));
  return {};
}

base::Result<void> AtomicFile::fail(base::Failure failure) {
  if (ok()) status_ = base::failed(std::move(failure));
  return status_;
}

std::string_view temp_target_name(std::string_view file_name) {
  if (!file_name.starts_with(kTempPrefix)) return {};
  std::string_view rest = file_name.substr(kTempPrefix.size());
  const std::size_t random_dot = rest.rfind('.');
  if (random_dot == std::string_view::npos || !all_of(rest.substr(random_dot + 1), is_hex_digit)) return {};
  rest = rest.substr(0, random_dot);
  const std::size_t pid_dot = rest.rfind('.');
  if (pid_dot == std::string_view::npos || !all_of(rest.substr(pid_dot + 1), is_digit)) return {};
  return rest.substr(0, pid_dot);
}

}  // namespace kiln::cache
