// is_entry_shaped(): what `kiln cache clear` and gc may remove.
#include "cache/entry_shape.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "cache/entry_format.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;
using testing::write_bytes;

class EntryShapeTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path path = temp.path() / "file";
  std::string entry = encode_entry(key_of("k"), testing::bytes_of("a payload of some bytes"), "{}");
};

TEST_F(EntryShapeTest, AnEntryIs) {
  write_bytes(path, entry);
  EXPECT_TRUE(is_entry_shaped(path));
}

// Damage kiln's checks find (a payload bit, a trailer's checksum) leaves a
// file kiln wrote: still kiln's to remove.
TEST_F(EntryShapeTest, ADamagedEntryStillIs) {
  entry[3] ^= 1;
  entry[entry.size() - 1] ^= 1;
  write_bytes(path, entry);
  EXPECT_TRUE(is_entry_shaped(path));
}

TEST_F(EntryShapeTest, AnOlderFormatsEntryIs) {
  write_bytes(path, testing::older_format_of(entry));
  EXPECT_TRUE(is_entry_shaped(path));
}

TEST_F(EntryShapeTest, OtherFilesAreNot) {
  write_bytes(path, std::string(500, 'x'));
  EXPECT_FALSE(is_entry_shaped(path)) << "no trailer";
  write_bytes(path, std::string_view("KILNENT"));
  EXPECT_FALSE(is_entry_shaped(path)) << "shorter than a trailer";
  write_bytes(path, std::string_view(""));
  EXPECT_FALSE(is_entry_shaped(path)) << "empty";
  EXPECT_FALSE(is_entry_shaped(temp.path() / "missing"));
  fs::create_directory(temp.path() / "folder");
  EXPECT_FALSE(is_entry_shaped(temp.path() / "folder"));
  ASSERT_EQ(::mkfifo((temp.path() / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(is_entry_shaped(temp.path() / "fifo")) << "and it returns: opened without blocking";
  write_bytes(temp.path() / "real", entry);
  fs::create_symlink(temp.path() / "real", temp.path() / "link");
  EXPECT_FALSE(is_entry_shaped(temp.path() / "link")) << "kiln writes no links";
}

}  // namespace
}  // namespace kiln::cache
