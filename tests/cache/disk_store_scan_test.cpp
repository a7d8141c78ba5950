// list() and clear(): only kiln's own names are listed or removed.
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::key_of;
using testing::write_bytes;

class DiskStoreScanTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  DiskStore store{dir()};
  std::vector<Key> keys{key_of("a"), key_of("b"), key_of("c")};
  std::vector<fs::path> foreign;

  void SetUp() override {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(store.put(keys[i], std::vector<char>(i + 1, 'x')).has_value());
    }
    const fs::path shard = store.entry_path(keys[0]).parent_path();
    const std::string rest = store.entry_path(keys[0]).filename().string();
    std::string upper = rest;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
    fs::create_directories(dir() / "zz");
    fs::create_directories(dir() / "ab");
    fs::create_directories(shard / std::string(30, 'e'));  // a folder under an entry's name
    foreign = {dir() / "index.sqlite", dir() / "README", dir() / "zz" / rest, dir() / "ab" / "notes.txt",
               dir() / "ab" / (rest + "0"), shard / upper, shard / ".tmp.notours", shard / (rest + ".bak"),
               dir() / "cd"};
    for (const fs::path& path : foreign) write_bytes(path, std::string_view("not kiln's"));
    write_bytes(shard / (".tmp." + rest + ".42.0123abcd"), std::string_view("a dead put()'s temporary"));
  }
};

TEST_F(DiskStoreScanTest, ListYieldsOnlyEntries) {
  std::vector<StoredEntry> listed = store.list();
  ASSERT_EQ(listed.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto found = std::find_if(listed.begin(), listed.end(), [&](const auto& e) { return e.key == keys[i]; });
    ASSERT_NE(found, listed.end()) << keys[i].hex();
    EXPECT_EQ(found->file_size, i + 1 + kTrailerSize);
  }
}

TEST_F(DiskStoreScanTest, ClearRemovesEntriesAndTemporariesOnly) {
  EXPECT_EQ(store.clear(), keys.size());
  EXPECT_TRUE(store.list().empty());
  EXPECT_TRUE(testing::temp_files_under(dir()).size() == 1) << "only the foreign .tmp.notours may stay";
  for (const Key& key : keys) EXPECT_FALSE(store.get(key).payload.has_value());
  for (const fs::path& path : foreign) EXPECT_TRUE(fs::exists(path)) << path;
  EXPECT_TRUE(fs::is_directory(store.entry_path(keys[0]).parent_path() / std::string(30, 'e')));
  EXPECT_EQ(store.clear(), 0U);
}

// Named as an entry is not enough: a file there that holds no entry (the
// cache folder may be a typo for a folder of one's own) stays.
TEST_F(DiskStoreScanTest, ClearRemovesOnlyFilesShapedAsEntries) {
  const fs::path notes = store.entry_path(key_of("notes"));
  fs::create_directories(notes.parent_path());
  write_bytes(notes, std::string(200, 'n'));
  const fs::path fifo = store.entry_path(key_of("fifo"));
  fs::create_directories(fifo.parent_path());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<base::Failure> failures;
  EXPECT_EQ(store.clear(&failures), keys.size());
  EXPECT_TRUE(failures.empty()) << failures.front().message;
  EXPECT_EQ(testing::read_bytes(notes), std::vector<char>(200, 'n'));
  EXPECT_TRUE(fs::is_fifo(fifo));
  // What verify reports: the FIFO, and the folder SetUp made under an entry's name.
  std::vector<fs::path> odd = store.odd_files();
  std::sort(odd.begin(), odd.end());
  std::vector<fs::path> expected = {fifo, store.entry_path(keys[0]).parent_path() / std::string(30, 'e')};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(odd, expected);
}

// What cannot be cleared says why, to a caller that asks.
TEST_F(DiskStoreScanTest, ClearOfAReadOnlyStoreSaysWhy) {
  const DiskStore read_only(dir(), {.read_only = true, .trusted_dirs = {}});
  std::vector<base::Failure> failures;
  EXPECT_EQ(read_only.clear(&failures), 0U);
  ASSERT_EQ(failures.size(), 1U);
  EXPECT_EQ(failures[0].kind, base::Failure::Kind::read_only);
  EXPECT_NE(failures[0].message.find(dir().string() + ": the store is read-only"), std::string::npos);
  EXPECT_EQ(store.list().size(), keys.size());
}

// Runs `check` where permission bits apply: here, or, where they do not stop
// this process (root), in a forked child whose effective capabilities no
// longer override them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER).
// The child's failures fail the test through its exit status.
template <class Check>
void with_permissions_applying(const fs::path& scratch, Check check) {
  if (!testing::permissions_are_bypassed(scratch)) {
    check();
    return;
  }
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) != 0) ::_exit(3);
    for (const int capability : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER})
      data[capability / 32].effective &= ~(1u << (capability % 32));
    if (::syscall(SYS_capset, &header, data) != 0) ::_exit(4);
    if (!testing::permissions_are_bypassed(scratch)) check();
    else ADD_FAILURE() << "permission bits still do not apply";
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed (status " << status << ")";
}

// A folder the user cannot write: clear removes nothing there and says so,
// per file, naming it and the cause.
TEST_F(DiskStoreScanTest, ClearOfAnUnwritableFolderNamesEachFileLeft) {
  const fs::path shard = store.entry_path(keys[0]).parent_path();
  ASSERT_EQ(::chmod(shard.c_str(), 0500), 0);
  with_permissions_applying(temp.path(), [&] {
    std::vector<base::Failure> failures;
    store.clear(&failures);
    ASSERT_FALSE(failures.empty());
    EXPECT_EQ(failures[0].kind, base::Failure::Kind::permission);
    EXPECT_NE(failures[0].message.find(shard.string() + "/"), std::string::npos) << failures[0].message;
    EXPECT_NE(failures[0].message.find("unlink: Permission denied"), std::string::npos) << failures[0].message;
  });
  ::chmod(shard.c_str(), 0700);
  EXPECT_TRUE(fs::exists(store.entry_path(keys[0]))) << "removed from a folder the user may not write";
}

TEST_F(DiskStoreScanTest, StoreWorksAfterClear) {
  store.clear();
  ASSERT_TRUE(store.put(keys[0], bytes_of("again")).has_value());
  EXPECT_EQ(store.get(keys[0]).payload, bytes_of("again"));
}

TEST(DiskStoreScan, MissingFolderIsEmpty) {
  testing::TempFolder temp;
  DiskStore store(temp.path() / "absent");
  EXPECT_TRUE(store.list().empty());
  EXPECT_EQ(store.clear(), 0U);
  EXPECT_FALSE(fs::exists(temp.path() / "absent"));
}

}  // namespace
}  // namespace kiln::cache
