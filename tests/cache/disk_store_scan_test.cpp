// list() and clear(): only kiln's own names are listed or removed.
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
