// DiskStore::put with metadata, and read_metadata: the entry's trailer and
// metadata alone, read from the end of the file.
#include <gtest/gtest.h>

#include <cstring>

#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::failure_of;
using testing::key_of;
using testing::problem_of;
using testing::read_bytes;
using testing::write_bytes;

class DiskStoreHeadTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  DiskStore store{temp.path() / "cache"};
  const Key key = key_of("a");
  const std::vector<char> payload = bytes_of(std::string("object\0code", 11));
  const std::string metadata = R"({"kernel":"a"})";

  fs::path stored() {
    const base::Result<void> put = store.put(key, payload, metadata);
    EXPECT_TRUE(put.has_value()) << failure_of(put);
    return store.entry_path(key);
  }
  // The failure read_metadata() gives, checked to name the entry's path and
  // to be of `kind`.
  std::string problem(base::Failure::Kind kind = base::Failure::Kind::corrupt) {
    const base::Result<std::optional<MetadataRead>> read = store.read_metadata(key);
    EXPECT_FALSE(read.has_value());
    if (read) return {};
    EXPECT_EQ(read.error().kind, kind) << read.error().message;
    EXPECT_NE(read.error().message.find(store.entry_path(key).string()), std::string::npos) << read.error().message;
    return read.error().message;
  }
  // The metadata read_metadata() gives, checked to be there.
  MetadataRead metadata_read() {
    const base::Result<std::optional<MetadataRead>> read = store.read_metadata(key);
    EXPECT_TRUE(read && *read) << failure_of(read);
    return read && *read ? **read : MetadataRead{"(none)", 0};
  }
};

TEST_F(DiskStoreHeadTest, MetadataIsStoredBetweenPayloadAndTrailer) {
  const fs::path path = stored();
  EXPECT_EQ(fs::file_size(path), payload.size() + metadata.size() + kTrailerSize);
  const std::vector<char> bytes = read_bytes(path);
  EXPECT_EQ(std::string(bytes.begin() + static_cast<std::ptrdiff_t>(payload.size()), bytes.end() - kTrailerSize),
            metadata);
  const LookupResult got = store.get(key);
  ASSERT_TRUE(got.payload.has_value()) << problem_of(got);
  EXPECT_EQ(*got.payload, payload) << "get() returns the payload alone";
  const MetadataRead read = metadata_read();
  EXPECT_EQ(read.metadata, metadata);
  EXPECT_EQ(read.payload_size, payload.size());
}

TEST_F(DiskStoreHeadTest, WithoutMetadataReadsEmpty) {
  ASSERT_TRUE(store.put(key, payload).has_value());
  const MetadataRead read = metadata_read();
  EXPECT_TRUE(read.metadata.empty());
  EXPECT_EQ(read.payload_size, payload.size());
}

TEST_F(DiskStoreHeadTest, MissingEntryIsNoProblem) {
  const base::Result<std::optional<MetadataRead>> read = store.read_metadata(key);
  ASSERT_TRUE(read.has_value()) << failure_of(read);
  EXPECT_FALSE(read->has_value());
}

// Around the first read (the last 4 KiB of the file): metadata that fits in
// it, that just does not, and the largest, read in a second one; with small
// and large payloads before it.
TEST_F(DiskStoreHeadTest, LongMetadataIsReadWhole) {
  for (std::size_t payload_size : {std::size_t{0}, std::size_t{11}, std::size_t{10000}}) {
    const std::vector<char> long_payload(payload_size, 'p');
    for (std::size_t size : {std::size_t{4096} - kTrailerSize - 1, std::size_t{4096} - kTrailerSize,
                             std::size_t{4096} - kTrailerSize + 1, std::size_t{4096}, kMaxMetadataSize}) {
      std::string long_metadata(size, 'm');
      long_metadata.front() = '<';
      long_metadata.back() = '>';
      ASSERT_TRUE(store.put(key, long_payload, long_metadata).has_value());
      SCOPED_TRACE(std::to_string(payload_size) + ", " + std::to_string(size));
      const MetadataRead read = metadata_read();
      EXPECT_EQ(read.metadata, long_metadata);
      EXPECT_EQ(read.payload_size, payload_size);
      EXPECT_EQ(*store.get(key).payload, long_payload);
    }
  }
}

TEST_F(DiskStoreHeadTest, PutRefusesMetadataOverTheLimit) {
  const base::Result<void> put = store.put(key, payload, std::string(kMaxMetadataSize + 1, 'm'));
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().kind, base::Failure::Kind::invalid);
  EXPECT_NE(failure_of(put).find(store.entry_path(key).string()), std::string::npos) << failure_of(put);
  EXPECT_FALSE(fs::exists(store.entry_path(key)));
  EXPECT_TRUE(testing::temp_files_under(temp.path()).empty());
}

// The file's size stands for the payload: bytes lost or added in front of
// the trailer are a size mismatch, without the payload being read.
TEST_F(DiskStoreHeadTest, ShortenedOrLengthenedPayloadIsASizeMismatch) {
  const fs::path path = stored();
  const std::vector<char> good = read_bytes(path);
  write_bytes(path, std::vector<char>(good.begin() + 1, good.end()));
  EXPECT_NE(problem().find(describe(EntryError::size_mismatch)), std::string::npos);
  std::vector<char> longer = good;
  longer.insert(longer.begin(), {'x', 'y'});
  write_bytes(path, longer);
  EXPECT_NE(problem().find(describe(EntryError::size_mismatch)), std::string::npos);
}

// Cut or extended at the end, the trailer is not where the file's size says.
TEST_F(DiskStoreHeadTest, CutOrExtendedFileHasNoTrailer) {
  const fs::path path = stored();
  const auto size = fs::file_size(path);
  fs::resize_file(path, size - 1);
  EXPECT_NE(problem().find(describe(EntryError::bad_magic)), std::string::npos);
  fs::resize_file(path, size + 1);
  EXPECT_NE(problem().find(describe(EntryError::bad_magic)), std::string::npos);
}

TEST_F(DiskStoreHeadTest, DamagedTrailerOrMetadataIsAProblemAndTheFileStays) {
  const fs::path path = stored();
  const std::vector<char> good = read_bytes(path);
  const std::size_t trailer_at = good.size() - kTrailerSize;
  const std::pair<std::size_t, EntryError> cases[] = {{trailer_at, EntryError::bad_magic},
                                                      {trailer_at + 8, EntryError::unsupported_version},
                                                      {trailer_at + 12, EntryError::bad_trailer_size},
                                                      {trailer_at + 20, EntryError::trailer_checksum},
                                                      {payload.size() + 2, EntryError::metadata_checksum}};
  for (const auto& [at, error] : cases) {
    std::vector<char> bytes = good;
    bytes[at] ^= 0x04;
    write_bytes(path, bytes);
    EXPECT_NE(problem().find(describe(error)), std::string::npos) << at;
    EXPECT_TRUE(fs::exists(path)) << "read_metadata() removes nothing";
  }
  write_bytes(path, std::vector<char>(good.end() - kTrailerSize + 1, good.end()));
  EXPECT_NE(problem().find(describe(EntryError::truncated_trailer)), std::string::npos);
  write_bytes(path, std::vector<char>(good.end() - kTrailerSize, good.end()));
  EXPECT_NE(problem().find(describe(EntryError::size_mismatch)), std::string::npos) << "the trailer alone";
  fs::resize_file(path, 0);
  EXPECT_NE(problem().find(describe(EntryError::truncated_trailer)), std::string::npos);
}

// Format version 2 (header first): said to be another version, not bad magic.
TEST_F(DiskStoreHeadTest, OlderFormatEntryIsAnUnsupportedVersion) {
  const fs::path path = stored();
  const std::vector<char> bytes = read_bytes(path);
  write_bytes(path, testing::older_format_of(std::string_view(bytes.data(), bytes.size())));
  EXPECT_NE(problem().find(describe(EntryError::unsupported_version)), std::string::npos);
}

// A flipped payload bit is get()'s to find: trailer and metadata alone cannot see it.
TEST_F(DiskStoreHeadTest, PayloadDamageIsLeftToGet) {
  const fs::path path = stored();
  std::vector<char> bytes = read_bytes(path);
  bytes.front() ^= 0x01;
  write_bytes(path, bytes);
  EXPECT_EQ(metadata_read().metadata, metadata);
  EXPECT_FALSE(store.get(key).payload.has_value());
}

TEST_F(DiskStoreHeadTest, AnotherKeysEntryIsAKeyMismatch) {
  const Key other = key_of("other");
  ASSERT_TRUE(store.put(other, payload, metadata).has_value());
  fs::create_directories(store.entry_path(key).parent_path());
  fs::copy_file(store.entry_path(other), store.entry_path(key));
  EXPECT_NE(problem().find(describe(EntryError::key_mismatch)), std::string::npos);
}

TEST_F(DiskStoreHeadTest, UnreadableEntryIsAProblem) {
  fs::create_directories(store.entry_path(key));  // a folder where the file should be
  EXPECT_NE(problem(base::Failure::Kind::io).find(std::strerror(EISDIR)), std::string::npos);
}

}  // namespace
}  // namespace kiln::cache
