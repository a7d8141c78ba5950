// put() on a folder it cannot write: a clean failure naming the path, no
// exception, and no temporary file left behind.
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cstring>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::key_of;
using testing::temp_files_under;

class DiskStorePutFailureTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  DiskStore store{dir()};
  const Key key = key_of("k");

  void expect_clean_failure(const PutResult& put, std::string_view cause) {
    EXPECT_FALSE(put.ok);
    EXPECT_NE(put.error.find(dir().string()), std::string::npos) << put.error;
    EXPECT_NE(put.error.find(cause), std::string::npos) << put.error;
    EXPECT_TRUE(temp_files_under(temp.path()).empty());
    EXPECT_FALSE(store.get(key).payload.has_value());
  }
};

// Root ignores permission bits, so this one only runs without that privilege;
// the tests below make the same failures in ways root cannot bypass.
TEST_F(DiskStorePutFailureTest, ReadOnlyFolder) {
  if (testing::permissions_are_bypassed(temp.path())) {
    GTEST_SKIP() << "permission bits do not stop this process (root?); "
                    "SubFolderIsAFile and FileSizeLimit cover the failure paths";
  }
  fs::create_directories(store.entry_path(key).parent_path());
  ASSERT_EQ(::chmod(store.entry_path(key).parent_path().c_str(), 0500), 0);
  expect_clean_failure(store.put(key, bytes_of("x")), std::strerror(EACCES));
}

TEST_F(DiskStorePutFailureTest, ReadOnlyCacheRoot) {
  if (testing::permissions_are_bypassed(temp.path())) {
    GTEST_SKIP() << "permission bits do not stop this process (root?)";
  }
  fs::create_directories(dir());
  ASSERT_EQ(::chmod(dir().c_str(), 0500), 0);
  expect_clean_failure(store.put(key, bytes_of("x")), std::strerror(EACCES));
}

TEST_F(DiskStorePutFailureTest, SubFolderIsAFile) {
  fs::create_directories(dir());
  testing::write_bytes(store.entry_path(key).parent_path(), std::string_view("in the way"));
  expect_clean_failure(store.put(key, bytes_of("x")), std::strerror(ENOTDIR));
}

TEST_F(DiskStorePutFailureTest, CacheRootIsAFile) {
  testing::write_bytes(dir(), std::string_view("in the way"));
  const PutResult put = store.put(key, bytes_of("x"));
  EXPECT_FALSE(put.ok);
  EXPECT_NE(put.error.find(dir().string()), std::string::npos) << put.error;
}

TEST_F(DiskStorePutFailureTest, EntryNameTakenByAFolder) {
  fs::create_directories(store.entry_path(key) / "occupied");  // rename cannot replace it
  const PutResult put = store.put(key, bytes_of("x"));
  EXPECT_FALSE(put.ok);
  EXPECT_NE(put.error.find(store.entry_path(key).string()), std::string::npos) << put.error;
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
  const PutResult put = store.put(key, std::vector<char>(64 * 1024, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  expect_clean_failure(put, std::strerror(EFBIG));
  EXPECT_FALSE(fs::exists(store.entry_path(key)));
}

}  // namespace
}  // namespace kiln::cache
