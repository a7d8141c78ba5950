// DiskStore::get_mapped: an entry checked in the caller's own mapping of it
// (what a bundle's kernels run from), judged and rejected as get() would.
#include <sys/mman.h>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::key_of;
using testing::read_bytes;
using testing::write_bytes;

// A mapper as the runtime's: the whole opened file, read-only, through its descriptor.
struct TestMapper {
  void* base = nullptr;
  std::size_t length = 0;
  int calls = 0;
  bool fail = false;
  ~TestMapper() {
    if (base != nullptr) ::munmap(base, length);
  }
  EntryMapper mapper() {
    return [this](const OpenedEntry& file) -> std::span<const char> {
      ++calls;
      if (fail) return {};
      length = file.size;
      base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, file.descriptor, 0);
      if (base == MAP_FAILED) base = nullptr;
      return base == nullptr ? std::span<const char>() : std::span<const char>(static_cast<const char*>(base), length);
    };
  }
};

class DiskStoreMapped : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  DiskStore store{temp.path() / "cache"};
  const Key key = key_of("bundle");
  const std::vector<char> payload = bytes_of(std::string("\x7f" "ELF a bundle's bytes\0and more", 29));

  void SetUp() override { ASSERT_TRUE(store.put(key, payload, R"({"kernel":"kiln.bundle"})").has_value()); }
};

TEST_F(DiskStoreMapped, AGoodEntryIsCheckedInTheCallersMappingItself) {
  TestMapper map;
  const MappedLookup found = store.get_mapped(key, map.mapper());
  ASSERT_TRUE(found.payload.has_value()) << (found.problem ? found.problem->message : "");
  EXPECT_FALSE(found.unmapped);
  // The payload is the mapping's head, not a copy: what runs from it is what was checked.
  EXPECT_EQ(found.payload->data(), static_cast<const char*>(map.base));
  EXPECT_EQ(std::vector<char>(found.payload->begin(), found.payload->end()), payload);
  EXPECT_EQ(map.length, fs::file_size(store.entry_path(key)));  // the whole file, trailer included
  EXPECT_EQ(found.file, store.entry_path(key));
  EXPECT_NE(found.file_inode, 0u);
  const LookupResult read = store.get(key);
  ASSERT_TRUE(read.payload.has_value());
  EXPECT_EQ(*read.payload, payload);  // the same bytes as the read path's
}

TEST_F(DiskStoreMapped, AFlippedByteIsRejectedAndRemovedAsGetWould) {
  std::vector<char> bytes = read_bytes(store.entry_path(key));
  bytes[5] ^= 0x01;
  write_bytes(store.entry_path(key), bytes);
  TestMapper map;
  const MappedLookup found = store.get_mapped(key, map.mapper());
  EXPECT_FALSE(found.payload.has_value());
  ASSERT_TRUE(found.problem.has_value());
  EXPECT_EQ(found.problem->kind, base::Failure::Kind::corrupt);
  EXPECT_NE(found.problem->message.find("payload checksum mismatch"), std::string::npos) << found.problem->message;
  EXPECT_NE(found.problem->message.find(store.entry_path(key).string()), std::string::npos);
  EXPECT_TRUE(found.removed);
  EXPECT_FALSE(fs::exists(store.entry_path(key)));
}

TEST_F(DiskStoreMapped, ABadEntryOfAReadOnlyStoreStays) {
  std::vector<char> bytes = read_bytes(store.entry_path(key));
  bytes.resize(bytes.size() - 1);  // truncated: the trailer no longer ends the file
  write_bytes(store.entry_path(key), bytes);
  StoreOptions options;
  options.read_only = true;
  DiskStore read_only(temp.path() / "cache", options);
  TestMapper map;
  const MappedLookup found = read_only.get_mapped(key, map.mapper());
  EXPECT_FALSE(found.payload.has_value());
  ASSERT_TRUE(found.problem.has_value());
  EXPECT_FALSE(found.removed);
  EXPECT_TRUE(fs::exists(read_only.entry_path(key)));
}

TEST_F(DiskStoreMapped, WhatCannotBeMappedIsLeftToTheReadPathUnchecked) {
  TestMapper map;
  map.fail = true;
  const MappedLookup found = store.get_mapped(key, map.mapper());
  EXPECT_EQ(map.calls, 1);
  EXPECT_TRUE(found.unmapped);
  EXPECT_FALSE(found.payload.has_value());
  EXPECT_FALSE(found.problem.has_value());
  EXPECT_TRUE(fs::exists(store.entry_path(key)));  // nothing was checked, nothing removed
}

TEST_F(DiskStoreMapped, NoEntryIsAPlainMissAndAFolderIsLeftToTheReadPath) {
  TestMapper map;
  const MappedLookup missing = store.get_mapped(key_of("none"), map.mapper());
  EXPECT_FALSE(missing.payload.has_value());
  EXPECT_FALSE(missing.problem.has_value());
  EXPECT_FALSE(missing.unmapped);
  fs::remove(store.entry_path(key));
  fs::create_directory(store.entry_path(key));
  const MappedLookup folder = store.get_mapped(key, map.mapper());
  EXPECT_TRUE(folder.unmapped);
  EXPECT_EQ(map.calls, 0);  // neither was handed to the mapper
}

}  // namespace
}  // namespace kiln::cache
