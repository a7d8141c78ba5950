#include "cache/atomic_file.hpp"

#include <gtest/gtest.h>

#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::failure_of;
using testing::read_bytes;
using testing::temp_files_under;

class AtomicFileTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path target() const { return temp.path() / "target"; }
};

TEST_F(AtomicFileTest, CommitPutsTheWholeFileInPlace) {
  {
    AtomicFile file(target());
    ASSERT_TRUE(file.ok()) << failure_of(file.status());
    EXPECT_EQ(file.temp_path().parent_path(), temp.path());
    EXPECT_TRUE(file.write(bytes_of("hello ")));
    EXPECT_TRUE(file.write(bytes_of("world")));
    EXPECT_FALSE(fs::exists(target())) << "visible before commit";
    const base::Result<void> committed = file.commit();
    ASSERT_TRUE(committed) << failure_of(committed);
  }
  EXPECT_EQ(read_bytes(target()), bytes_of("hello world"));
  EXPECT_EQ(testing::mode_of(target()), 0600U);
  EXPECT_TRUE(temp_files_under(temp.path()).empty());
}

TEST_F(AtomicFileTest, UncommittedTemporaryIsRemoved) {
  fs::path temp_path;
  {
    AtomicFile file(target());
    ASSERT_TRUE(file.ok()) << failure_of(file.status());
    temp_path = file.temp_path();
    ASSERT_TRUE(file.write(bytes_of("partial")));
    EXPECT_TRUE(fs::exists(temp_path));
  }
  EXPECT_FALSE(fs::exists(temp_path));
  EXPECT_FALSE(fs::exists(target()));
}

TEST_F(AtomicFileTest, ReplacesAnExistingFile) {
  testing::write_bytes(target(), std::string_view("old"));
  AtomicFile file(target());
  ASSERT_TRUE(file.write(bytes_of("new")));
  const base::Result<void> committed = file.commit();
  ASSERT_TRUE(committed) << failure_of(committed);
  EXPECT_EQ(read_bytes(target()), bytes_of("new"));
}

TEST_F(AtomicFileTest, TwoWritersGetDistinctTemporaries) {
  AtomicFile a(target());
  AtomicFile b(target());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.temp_path(), b.temp_path());
}

// The first failure is every later call's answer.
TEST_F(AtomicFileTest, MissingFolderFailsWithItsPath) {
  AtomicFile file(temp.path() / "missing" / "target");
  ASSERT_FALSE(file.ok());
  const base::Failure& failure = file.status().error();
  EXPECT_EQ(failure.kind, base::Failure::Kind::not_found);
  EXPECT_EQ(failure.error_number, ENOENT);
  EXPECT_NE(failure.message.find((temp.path() / "missing").string()), std::string::npos) << failure.message;
  const base::Result<void> written = file.write(bytes_of("x"));
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message, failure.message);
  const base::Result<void> committed = file.commit();
  ASSERT_FALSE(committed);
  EXPECT_EQ(committed.error().message, failure.message);
}

TEST_F(AtomicFileTest, FailedRenameRemovesTheTemporary) {
  fs::create_directories(target() / "occupied");  // a non-empty folder cannot be renamed over
  fs::path temp_path;
  {
    AtomicFile file(target());
    ASSERT_TRUE(file.write(bytes_of("x")));
    const base::Result<void> committed = file.commit();
    ASSERT_FALSE(committed);
    EXPECT_NE(committed.error().message.find("rename"), std::string::npos) << committed.error().message;
    EXPECT_EQ(failure_of(file.status()), committed.error().message);
    temp_path = file.temp_path();
    EXPECT_TRUE(fs::exists(temp_path));  // still there until the destructor
  }
  EXPECT_FALSE(fs::exists(temp_path));
  EXPECT_TRUE(fs::exists(target() / "occupied"));
}

TEST(TempTargetName, RecognisesOnlyOurTemporaries) {
  EXPECT_EQ(temp_target_name(".tmp.abc.123.0f0f"), "abc");
  EXPECT_EQ(temp_target_name(".tmp.a.b.123.0f0f"), "a.b");
  EXPECT_EQ(temp_target_name(".tmp.abc.12x.0f0f"), "");
  EXPECT_EQ(temp_target_name(".tmp.abc.123.XYZ"), "");
  EXPECT_EQ(temp_target_name(".tmp.abc.123."), "");
  EXPECT_EQ(temp_target_name(".tmp.abc"), "");
  EXPECT_EQ(temp_target_name("tmp.abc.123.0f"), "");
  EXPECT_EQ(temp_target_name("index.sqlite"), "");
  EXPECT_EQ(temp_target_name(""), "");
}

}  // namespace
}  // namespace kiln::cache
