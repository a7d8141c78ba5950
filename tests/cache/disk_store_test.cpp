#include "cache/disk_store.hpp"

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>

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

class DiskStoreTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  DiskStore store{dir()};
};

TEST_F(DiskStoreTest, EntryPathSplitsTheHex) {
  const Key key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(store.entry_path(key), dir() / "01" / "23456789abcdeffedcba9876543210");
}

TEST_F(DiskStoreTest, ConstructorCreatesNothing) {
  DiskStore other(dir() / "nested");
  EXPECT_FALSE(fs::exists(dir()));
}

TEST_F(DiskStoreTest, PutThenGetRoundTrips) {
  const Key key = key_of("a");
  const std::vector<char> payload = bytes_of(std::string("object\0code", 11));
  const base::Result<void> put = store.put(key, payload);
  ASSERT_TRUE(put.has_value()) << failure_of(put);
  const LookupResult got = store.get(key);
  ASSERT_TRUE(got.payload.has_value()) << problem_of(got);
  EXPECT_EQ(*got.payload, payload);
  EXPECT_FALSE(got.problem.has_value());
  EXPECT_EQ(fs::file_size(store.entry_path(key)), payload.size() + kTrailerSize);
}

// The payload is the file's first bytes, so the entry file itself can be
// mapped (dlopen'ed); the hit names that file.
TEST_F(DiskStoreTest, PayloadSitsAtOffsetZeroOfTheEntryFile) {
  const Key key = key_of("a");
  constexpr char kElf[] = "\x7f" "ELF\x02\x01\x01\0 a shared object";
  const std::vector<char> payload(kElf, kElf + sizeof kElf - 1);
  const std::string metadata = R"({"kernel":"a"})";
  ASSERT_TRUE(store.put(key, payload, metadata).has_value());
  const std::vector<char> file = read_bytes(store.entry_path(key));
  ASSERT_EQ(file.size(), payload.size() + metadata.size() + kTrailerSize);
  EXPECT_EQ(std::vector<char>(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(payload.size())), payload);
  EXPECT_EQ(std::string(file.begin() + static_cast<std::ptrdiff_t>(payload.size()), file.end() - kTrailerSize),
            metadata);
  EXPECT_EQ(std::string(file.end() - kTrailerSize, file.end() - kTrailerSize + 8), std::string("KILNENT\0", 8));
}

TEST_F(DiskStoreTest, HitNamesTheEntryFileAndMissNamesNone) {
  const Key key = key_of("a");
  const std::vector<char> payload = bytes_of("object code");
  ASSERT_TRUE(store.put(key, payload).has_value());
  const LookupResult hit = store.get(key);
  ASSERT_TRUE(hit.payload.has_value()) << problem_of(hit);
  EXPECT_EQ(hit.file, store.entry_path(key));
  const std::vector<char> file = read_bytes(hit.file);
  ASSERT_GE(file.size(), payload.size());
  EXPECT_EQ(std::vector<char>(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(payload.size())), *hit.payload)
      << "the file named begins with the payload returned";

  const LookupResult miss = store.get(key_of("never stored"));
  EXPECT_FALSE(miss.payload.has_value());
  EXPECT_TRUE(miss.file.empty());

  std::vector<char> bytes = read_bytes(store.entry_path(key));
  bytes[0] ^= 1;
  write_bytes(store.entry_path(key), bytes);
  const LookupResult rejected = store.get(key);
  EXPECT_FALSE(rejected.payload.has_value());
  ASSERT_TRUE(rejected.problem.has_value());
  EXPECT_EQ(rejected.problem->kind, base::Failure::Kind::corrupt);
  EXPECT_TRUE(rejected.file.empty()) << "a rejected entry names no file";
}

TEST_F(DiskStoreTest, FoldersAre0700AndEntries0600) {
  const Key key = key_of("a");
  ASSERT_TRUE(store.put(key, bytes_of("x")).has_value());
  EXPECT_EQ(testing::mode_of(dir()), 0700U);
  EXPECT_EQ(testing::mode_of(store.entry_path(key).parent_path()), 0700U);
  EXPECT_EQ(testing::mode_of(store.entry_path(key)), 0600U);
}

TEST_F(DiskStoreTest, EmptyPayloadRoundTrips) {
  ASSERT_TRUE(store.put(key_of("empty"), {}).has_value());
  const LookupResult got = store.get(key_of("empty"));
  ASSERT_TRUE(got.payload.has_value()) << problem_of(got);
  EXPECT_TRUE(got.payload->empty());
}

TEST_F(DiskStoreTest, MissingEntryIsAPlainMiss) {
  const LookupResult got = store.get(key_of("never stored"));
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_FALSE(got.problem.has_value()) << problem_of(got);
  EXPECT_FALSE(fs::exists(dir())) << "get() must not create folders";
}

TEST_F(DiskStoreTest, PutReplacesAnEntry) {
  const Key key = key_of("a");
  ASSERT_TRUE(store.put(key, bytes_of("first")).has_value());
  ASSERT_TRUE(store.put(key, bytes_of("second, longer")).has_value());
  EXPECT_EQ(store.get(key).payload, bytes_of("second, longer"));
  EXPECT_TRUE(testing::temp_files_under(dir()).empty());
}

TEST_F(DiskStoreTest, KeysDoNotMix) {
  ASSERT_TRUE(store.put(key_of("a"), bytes_of("A")).has_value());
  ASSERT_TRUE(store.put(key_of("b"), bytes_of("B")).has_value());
  EXPECT_EQ(store.get(key_of("a")).payload, bytes_of("A"));
  EXPECT_EQ(store.get(key_of("b")).payload, bytes_of("B"));
}

// Readers see a whole entry or none, never a torn one, while writers race.
TEST_F(DiskStoreTest, ConcurrentPutsAndGetsSeeWholeEntries) {
  const Key key = key_of("raced");
  std::atomic<bool> stop{false};
  std::atomic<int> problems{0};
  std::vector<std::thread> threads;
  for (int writer = 0; writer < 2; ++writer) {
    threads.emplace_back([&, writer] {
      const std::vector<char> payload(4096 + writer, static_cast<char>('a' + writer));
      for (int i = 0; i < 50; ++i) EXPECT_TRUE(store.put(key, payload).has_value());
    });
  }
  std::thread reader([&] {
    while (!stop) {
      const LookupResult got = store.get(key);
      if (got.problem) ++problems;
      if (got.payload && got.payload->size() != 4096 && got.payload->size() != 4097) ++problems;
    }
  });
  for (std::thread& t : threads) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(problems.load(), 0);
  EXPECT_TRUE(store.get(key).payload.has_value());
  EXPECT_TRUE(testing::temp_files_under(dir()).empty());
}

class DiskStoreCorruptionTest : public DiskStoreTest {
 protected:
  const Key key = key_of("victim");
  const std::vector<char> payload = bytes_of("a payload long enough to flip bytes in, 0123456789");

  fs::path stored() {
    EXPECT_TRUE(store.put(key, payload).has_value());
    return store.entry_path(key);
  }

  // The bad entry is a miss that says why, and is gone; a new put() works.
  void expect_rejected(std::string_view why) {
    const fs::path path = store.entry_path(key);
    const LookupResult got = store.get(key);
    EXPECT_FALSE(got.payload.has_value());
    ASSERT_TRUE(got.problem.has_value());
    EXPECT_EQ(got.problem->kind, base::Failure::Kind::corrupt) << problem_of(got);
    EXPECT_NE(problem_of(got).find(path.string() + ": "), std::string::npos) << problem_of(got);
    EXPECT_NE(problem_of(got).find(why), std::string::npos) << problem_of(got);
    EXPECT_FALSE(fs::exists(path)) << "bad entry left in place";
    ASSERT_TRUE(store.put(key, payload).has_value());
    EXPECT_EQ(store.get(key).payload, payload);
  }
};

TEST_F(DiskStoreCorruptionTest, FlippedByteAnywhereIsDetected) {
  std::mt19937 rng(1234);  // fixed: a failure must be reproducible
  for (int round = 0; round < 40; ++round) {
    const fs::path path = stored();
    std::vector<char> bytes = read_bytes(path);
    std::uniform_int_distribution<std::size_t> offset(0, bytes.size() - 1);
    const std::size_t at = offset(rng);
    bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
    write_bytes(path, bytes);
    SCOPED_TRACE("flipped offset " + std::to_string(at));
    expect_rejected("");
  }
}

// Cut at the end, the trailer is gone: shorter than one, or no magic where it should be.
TEST_F(DiskStoreCorruptionTest, TruncatedFileIsDetected) {
  const std::size_t whole = payload.size() + kTrailerSize;
  for (std::size_t keep : {std::size_t{10}, kTrailerSize - 1, kTrailerSize, kTrailerSize + 5, whole - 1}) {
    const fs::path path = stored();
    fs::resize_file(path, keep);
    SCOPED_TRACE("kept " + std::to_string(keep));
    expect_rejected(keep < kTrailerSize ? describe(EntryError::truncated_trailer) : describe(EntryError::bad_magic));
  }
}

// Bytes lost from the front leave the trailer whole: its sizes tell.
TEST_F(DiskStoreCorruptionTest, PayloadCutAtTheFrontIsASizeMismatch) {
  const fs::path path = stored();
  const std::vector<char> bytes = read_bytes(path);
  write_bytes(path, std::vector<char>(bytes.begin() + 5, bytes.end()));
  expect_rejected(describe(EntryError::size_mismatch));
}

TEST_F(DiskStoreCorruptionTest, ZeroLengthFileIsDetected) {
  fs::resize_file(stored(), 0);
  expect_rejected(describe(EntryError::truncated_trailer));
}

TEST_F(DiskStoreCorruptionTest, WrongMagicIsDetected) {
  const fs::path path = stored();
  std::vector<char> bytes = read_bytes(path);
  bytes[bytes.size() - kTrailerSize] = 'X';
  write_bytes(path, bytes);
  expect_rejected(describe(EntryError::bad_magic));
}

// An entry of format version 2 (header first) is a miss that says so, and is
// replaced like any bad entry.
TEST_F(DiskStoreCorruptionTest, OlderFormatEntryIsAnUnsupportedVersion) {
  const fs::path path = stored();
  const std::vector<char> bytes = read_bytes(path);
  write_bytes(path, testing::older_format_of(std::string_view(bytes.data(), bytes.size())));
  expect_rejected(describe(EntryError::unsupported_version));
}

TEST_F(DiskStoreCorruptionTest, AnotherKeysEntryIsDetected) {
  const Key other = key_of("other");
  ASSERT_TRUE(store.put(other, payload).has_value());
  fs::create_directories(store.entry_path(key).parent_path());
  fs::copy_file(store.entry_path(other), store.entry_path(key));
  expect_rejected(describe(EntryError::key_mismatch));
}

TEST_F(DiskStoreCorruptionTest, RejectionIsLogged) {
  testing::LogCapture log;
  fs::resize_file(stored(), 3);
  EXPECT_FALSE(store.get(key).payload.has_value());
  EXPECT_NE(log.text().find("warning"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find(store.entry_path(key).string()), std::string::npos) << log.text();
}

TEST_F(DiskStoreCorruptionTest, UnreadableEntryIsAMissWithAProblem) {
  fs::create_directories(store.entry_path(key));  // a folder where the file should be: read fails
  const LookupResult got = store.get(key);
  EXPECT_FALSE(got.payload.has_value());
  ASSERT_TRUE(got.problem.has_value());
  EXPECT_EQ(got.problem->kind, base::Failure::Kind::io) << got.problem->message;
  EXPECT_EQ(got.problem->error_number, EISDIR) << got.problem->message;
  EXPECT_NE(problem_of(got).find(store.entry_path(key).string()), std::string::npos) << problem_of(got);
}

}  // namespace
}  // namespace kiln::cache
