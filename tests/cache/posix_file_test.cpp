// The cache's own file steps: folders made with their parents, a removal that
// spares a file put in the read one's place, and the failures they report.
#include "cache/posix_file.hpp"

#include <sys/stat.h>

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

// mkdir in /proc says ENOENT though /proc exists: make_folders used to make
// the parent and try again, for ever, until the stack overflowed (SIGSEGV
// with KILN_CACHE_DIR=/proc). Now it fails once, naming the folder.
TEST(MakeFolders, AFolderThatCannotBeMadeFailsNamingIt) {
  const fs::path folder = "/proc/kiln-make-folders-test";
  if (!fs::is_directory("/proc")) GTEST_SKIP() << "no /proc here";
  const base::Result<void> made = make_folders(folder / "ab");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().message, base::errno_text(folder, "mkdir", made.error().error_number));
  EXPECT_FALSE(fs::exists(folder));
}

// A FIFO at the path: refused on its type at once, never read (a read would
// wait for a writer for ever).
TEST(ReadFile, AFifoIsNotRegularAndDoesNotBlock) {
  testing::TempFolder temp;
  const fs::path fifo = temp.path() / "entry";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const FileRead read = read_file(fifo, /*keep_open=*/true);
  EXPECT_EQ(read.status, FileRead::Status::not_regular);
  EXPECT_EQ(file_type_name(read.mode), "a FIFO");
  EXPECT_TRUE(read.bytes.empty());
  EXPECT_LT(read.descriptor.fd(), 0);
  fs::create_directory(temp.path() / "folder");
  const FileRead folder = read_file(temp.path() / "folder");
  EXPECT_EQ(folder.status, FileRead::Status::read_failed);
  EXPECT_EQ(folder.error, EISDIR);
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
  EXPECT_TRUE(remove_if_same(path, bad.device, bad.inode));
  EXPECT_TRUE(fs::exists(path));

  const FileRead good = read_file(path);
  EXPECT_TRUE(remove_if_same(path, good.device, good.inode));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(remove_if_same(path, good.device, good.inode)) << "already gone is success";
}

}  // namespace
}  // namespace kiln::cache
