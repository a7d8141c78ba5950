// The cache's own file steps: folders made with their parents, a removal that
// spares a file put in the read one's place, and the failures they report.
#include "cache/posix_file.hpp"

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using Kind = base::Failure::Kind;
using testing::failure_of;
using testing::write_bytes;

TEST(MakeFolders, MakesEveryMissingParent0700) {
  testing::TempFolder temp;
  const fs::path deep = temp.path() / "a" / "b" / "c";
  const base::Result<void> made = make_folders(deep / "");  // a trailing separator too
  ASSERT_TRUE(made) << failure_of(made);
  EXPECT_TRUE(fs::is_directory(deep));
  EXPECT_EQ(testing::mode_of(temp.path() / "a"), 0700U);
  EXPECT_EQ(testing::mode_of(deep), 0700U);
  EXPECT_TRUE(make_folders(deep)) << "an existing folder is fine";
}

TEST(MakeFolders, AFileInTheWayFailsNamingIt) {
  testing::TempFolder temp;
  write_bytes(temp.path() / "file", std::string_view("x"));
  for (const fs::path& folder : {temp.path() / "file", temp.path() / "file" / "below"}) {
    const base::Result<void> made = make_folders(folder);
    ASSERT_FALSE(made) << folder;
    EXPECT_EQ(made.error().kind, Kind::io);
    EXPECT_EQ(made.error().error_number, ENOTDIR);
    EXPECT_EQ(made.error().message, base::errno_text(folder, "mkdir", ENOTDIR));
  }
}

TEST(SyncFolder, AMissingFolderIsNotFound) {
  testing::TempFolder temp;
  EXPECT_TRUE(sync_folder(temp.path()));
  const base::Result<void> synced = sync_folder(temp.path() / "missing");
  ASSERT_FALSE(synced);
  EXPECT_EQ(synced.error().kind, Kind::not_found);
  EXPECT_EQ(synced.error().message, base::errno_text(temp.path() / "missing", "open", ENOENT));
}

// Another process replaced the bad file with a good one: that one stays.
TEST(RemoveIfSame, RemovesOnlyTheFileThatWasRead) {
  testing::TempFolder temp;
  const fs::path path = temp.path() / "entry";
  write_bytes(path, std::string_view("bad"));
  const FileRead bad = read_file(path);
  ASSERT_EQ(bad.status, FileRead::Status::ok);
  write_bytes(temp.path() / "good", std::string_view("good"));
  fs::rename(temp.path() / "good", path);
  EXPECT_TRUE(remove_if_same(path, bad));
  EXPECT_TRUE(fs::exists(path));

  const FileRead good = read_file(path);
  EXPECT_TRUE(remove_if_same(path, good));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(remove_if_same(path, good)) << "already gone is success";
}

}  // namespace
}  // namespace kiln::cache
