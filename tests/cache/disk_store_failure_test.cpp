// put() on a folder it cannot write: a clean failure naming the path, no
// exception, and no temporary file left behind.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::failure_of;
using testing::key_of;
using testing::temp_files_under;

class DiskStorePutFailureTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  DiskStore store{dir()};
  const Key key = key_of("k");

  // A failure of `kind`, naming the cache folder and errno `error`'s text.
  void expect_clean_failure(const base::Result<void>& put, base::Failure::Kind kind, int error) {
    ASSERT_FALSE(put.has_value());
    EXPECT_EQ(put.error().kind, kind) << put.error().message;
    EXPECT_EQ(put.error().error_number, error) << put.error().message;
    EXPECT_NE(failure_of(put).find(dir().string()), std::string::npos) << failure_of(put);
    EXPECT_NE(failure_of(put).find(std::strerror(error)), std::string::npos) << failure_of(put);
    EXPECT_TRUE(temp_files_under(temp.path()).empty());
    EXPECT_FALSE(store.get(key).payload.has_value());
  }
};

// Root ignores permission bits: as root, the read-only cases run in a forked
// child that has dropped to the unprivileged user `nobody` (the scratch tree is
// handed to it first), so they run everywhere instead of being skipped.
template <class Check>
void as_unprivileged(const fs::path& scratch, Check check) {
  if (!testing::permissions_are_bypassed(scratch)) {
    check();
    return;
  }
  constexpr uid_t kNobody = 65534;
  for (const auto& entry : fs::recursive_directory_iterator(scratch))
    ASSERT_EQ(::lchown(entry.path().c_str(), kNobody, kNobody), 0) << entry.path();
  ASSERT_EQ(::chown(scratch.c_str(), kNobody, kNobody), 0);
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    check();
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the unprivileged child failed (status " << status << ")";
  ::chown(scratch.c_str(), 0, 0);  // so that the fixture can clean up
}

TEST_F(DiskStorePutFailureTest, ReadOnlyFolder) {
  fs::create_directories(store.entry_path(key).parent_path());
  ASSERT_EQ(::chmod(store.entry_path(key).parent_path().c_str(), 0500), 0);
  as_unprivileged(temp.path(), [&] {
    // A store of the user's own: one opened as root judges the folders,
    // handed to `nobody` meanwhile, as root would (not trusted).
    expect_clean_failure(DiskStore(dir()).put(key, bytes_of("x")), base::Failure::Kind::permission, EACCES);
  });
}

TEST_F(DiskStorePutFailureTest, ReadOnlyCacheRoot) {
  fs::create_directories(dir());
  ASSERT_EQ(::chmod(dir().c_str(), 0500), 0);
  as_unprivileged(temp.path(), [&] {
    expect_clean_failure(store.put(key, bytes_of("x")), base::Failure::Kind::permission, EACCES);
  });
}

TEST_F(DiskStorePutFailureTest, SubFolderIsAFile) {
  fs::create_directories(dir());
  testing::write_bytes(store.entry_path(key).parent_path(), std::string_view("in the way"));
  expect_clean_failure(store.put(key, bytes_of("x")), base::Failure::Kind::io, ENOTDIR);
}

TEST_F(DiskStorePutFailureTest, CacheRootIsAFile) {
  testing::write_bytes(dir(), std::string_view("in the way"));
  const base::Result<void> put = store.put(key, bytes_of("x"));
  EXPECT_FALSE(put.has_value());
  EXPECT_NE(failure_of(put).find(dir().string()), std::string::npos) << failure_of(put);
}

TEST_F(DiskStorePutFailureTest, EntryNameTakenByAFolder) {
  fs::create_directories(store.entry_path(key) / "occupied");  // rename cannot replace it
  const base::Result<void> put = store.put(key, bytes_of("x"));
  EXPECT_FALSE(put.has_value());
  EXPECT_NE(failure_of(put).find(store.entry_path(key).string()), std::string::npos) << failure_of(put);
  EXPECT_TRUE(temp_files_under(temp.path()).empty());
}

// A write that fails half way, as on a full disk: RLIMIT_FSIZE makes write(2)
// return short and then EFBIG, even for root.
TEST_F(DiskStorePutFailureTest, FileSizeLimit) {
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 1000;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // else the signal kills the test
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const base::Result<void> put = store.put(key, std::vector<char>(64 * 1024, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  expect_clean_failure(put, base::Failure::Kind::io, EFBIG);
  EXPECT_FALSE(fs::exists(store.entry_path(key)));
}

}  // namespace
}  // namespace kiln::cache
