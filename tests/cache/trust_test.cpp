// Trust: a cache others can write is a way into every process that loads from
// it. Folders and entries are judged by owner and mode, or by lying inside a
// folder the user trusts; a refused or read-only store writes and removes nothing.
#include "cache/trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/eviction.hpp"
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

constexpr uid_t kNobody = 65534;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
}

TEST(UntrustedCauseTest, OwnOrRootAndNotWritableByOthersIsTrusted) {
  EXPECT_EQ(untrusted_cause(1000, S_IFDIR | 0700, 1000), "");
  EXPECT_EQ(untrusted_cause(1000, S_IFREG | 0644, 1000), "");
  EXPECT_EQ(untrusted_cause(0, S_IFDIR | 0755, 1000), "") << "root's folders are trusted";
  EXPECT_EQ(untrusted_cause(0, S_IFDIR | 01777, 1000), "world-writable (mode 1777)") << "root or not, others can write";
}

TEST(UntrustedCauseTest, NamesEveryCause) {
  EXPECT_EQ(untrusted_cause(1000, S_IFDIR | 0777, 1000), "world-writable (mode 0777)");
  EXPECT_EQ(untrusted_cause(1000, S_IFREG | 0660, 1000), "group-writable (mode 0660)");
  EXPECT_EQ(untrusted_cause(kNobody, S_IFREG | 0600, 1000), "owned by uid 65534 (nobody)");
  EXPECT_EQ(untrusted_cause(kNobody, S_IFREG | 0662, 1000),
            "owned by uid 65534 (nobody), world-writable (mode 0662)");
  EXPECT_EQ(untrusted_cause(kNobody, S_IFREG | 0620, 1000), "owned by uid 65534 (nobody), group-writable (mode 0620)");
  EXPECT_TRUE(contains(untrusted_cause(4242424, S_IFREG | 0600, 1000), "owned by uid 4242424 (no user name)"));
}

TEST(LiesInsideTest, ComparesWholeComponents) {
  EXPECT_TRUE(lies_inside("/a/b/c", "/a/b"));
  EXPECT_TRUE(lies_inside("/a/b", "/a/b"));
  EXPECT_TRUE(lies_inside("/a/b/c", "/a/b/"));
  EXPECT_TRUE(lies_inside("/a/b/../b/c", "/a/./b"));
  EXPECT_FALSE(lies_inside("/a/bc", "/a/b")) << "a string prefix is not a folder prefix";
  EXPECT_FALSE(lies_inside("/a", "/a/b"));
  EXPECT_FALSE(lies_inside("/a/b/../c", "/a/b"));
  const std::vector<fs::path> folders{"", "/x/y", "/a/b"};
  EXPECT_TRUE(lies_inside_any("/a/b/c", folders));
  EXPECT_FALSE(lies_inside_any("/q", folders)) << "an empty entry must not mean the working folder";
}

TEST(LiesInsideTest, FollowsSymbolicLinks) {
  testing::TempFolder temp;
  fs::create_directories(temp.path() / "real" / "cache");
  fs::create_directory_symlink(temp.path() / "real", temp.path() / "link");
  EXPECT_TRUE(lies_inside(temp.path() / "real" / "cache", temp.path() / "link"));
  EXPECT_TRUE(lies_inside(temp.path() / "link" / "cache" / "not-yet", temp.path() / "real"));
  EXPECT_FALSE(lies_inside(temp.path() / "link" / "cache", temp.path() / "lin"));
}

class TrustTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  Key key = key_of("entry");
  std::vector<char> payload = bytes_of("object code");

  void SetUp() override { ASSERT_TRUE(DiskStore(dir()).put(key, payload).has_value()); }
  fs::path entry() const { return DiskStore(dir()).entry_path(key); }

  // As root only; the caller skips otherwise.
  static void give_to_nobody(const fs::path& path) {
    ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0) << path << ": " << std::strerror(errno);
  }
};

TEST_F(TrustTest, OwnFolderAndEntryAreTrusted) {
  const DiskStore store(dir());
  EXPECT_EQ(store.refusal(), "");
  EXPECT_EQ(store.get(key).payload, payload);
  EXPECT_EQ(DiskStore(temp.path() / "missing").refusal(), "") << "a missing folder is created 0700 by put()";
}

TEST_F(TrustTest, WorldWritableFolderIsRefused) {
  ASSERT_EQ(::chmod(dir().c_str(), 0777), 0);
  testing::LogCapture log;
  const DiskStore store(dir());
  EXPECT_EQ(store.refusal(), dir().string() + ": world-writable (mode 0777) (not trusted)");
  EXPECT_TRUE(contains(log.text(), store.refusal()));

  const LookupResult got = store.get(key);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_EQ(problem_of(got), store.refusal());
  ASSERT_TRUE(got.problem.has_value());
  EXPECT_EQ(got.problem->kind, base::Failure::Kind::untrusted);
  EXPECT_FALSE(got.removed);
  EXPECT_TRUE(fs::exists(entry())) << "the entry stays";

  const base::Result<void> put = store.put(key_of("other"), payload);
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().kind, base::Failure::Kind::untrusted);
  EXPECT_TRUE(contains(failure_of(put), "world-writable (mode 0777)"));
  EXPECT_FALSE(fs::exists(store.entry_path(key_of("other"))));
}

TEST_F(TrustTest, GroupWritableEntryIsRefusedAndKept) {
  ASSERT_EQ(::chmod(entry().c_str(), 0660), 0);
  const std::vector<char> before = read_bytes(entry());
  testing::LogCapture log;
  const LookupResult got = DiskStore(dir()).get(key);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_EQ(problem_of(got), entry().string() + ": group-writable (mode 0660) (not trusted)");
  ASSERT_TRUE(got.problem.has_value());
  EXPECT_EQ(got.problem->kind, base::Failure::Kind::untrusted);
  EXPECT_FALSE(got.removed);
  EXPECT_EQ(read_bytes(entry()), before) << "not ours to remove";
  EXPECT_TRUE(contains(log.text(), "not loading " + problem_of(got)));
}

TEST_F(TrustTest, TrustedFolderIsAccepted) {
  ASSERT_EQ(::chmod(dir().c_str(), 0777), 0);
  ASSERT_EQ(::chmod(entry().c_str(), 0666), 0);
  fs::create_directory_symlink(temp.path(), temp.path().parent_path() / (temp.path().filename().string() + "-link"));
  const fs::path link = temp.path().parent_path() / (temp.path().filename().string() + "-link");
  for (const fs::path& trusted : {temp.path(), dir(), link, link / "cache" / ""}) {
    const DiskStore store(dir(), {.trusted_dirs = {"/nonexistent", trusted}});
    EXPECT_EQ(store.refusal(), "") << trusted;
    EXPECT_EQ(store.get(key).payload, payload) << trusted;
  }
  fs::remove(link);
  // A sibling whose name is a prefix of the folder's is not the folder.
  const DiskStore near(dir(), {.trusted_dirs = {temp.path() / "cach"}});
  EXPECT_TRUE(contains(near.refusal(), "world-writable"));
}

TEST_F(TrustTest, EntryInATrustedShardIsAccepted) {
  // The folder itself is fine; only its entry is writable by others, and the
  // entry's shard is listed as trusted.
  ASSERT_EQ(::chmod(entry().c_str(), 0666), 0);
  const DiskStore store(dir(), {.trusted_dirs = {entry().parent_path()}});
  EXPECT_EQ(store.get(key).payload, payload);
}

TEST_F(TrustTest, ForeignOwnedFolderIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to uid 65534 (chown) needs root; this test runs as uid " << ::geteuid();
  give_to_nobody(dir());
  const DiskStore store(dir());
  EXPECT_EQ(store.refusal(), dir().string() + ": owned by uid 65534 (nobody) (not trusted)");
  EXPECT_EQ(problem_of(store.get(key)), store.refusal());
  EXPECT_TRUE(fs::exists(entry()));
  EXPECT_EQ(DiskStore(dir(), {.trusted_dirs = {dir()}}).get(key).payload, payload);
}

TEST_F(TrustTest, ForeignOwnedEntryIsRefusedAndKept) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to uid 65534 (chown) needs root; this test runs as uid " << ::geteuid();
  give_to_nobody(entry());
  const DiskStore store(dir());
  EXPECT_EQ(store.refusal(), "");
  const LookupResult got = store.get(key);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_EQ(problem_of(got), entry().string() + ": owned by uid 65534 (nobody) (not trusted)");
  EXPECT_FALSE(got.removed);
  EXPECT_TRUE(fs::exists(entry()));
}

TEST_F(TrustTest, RefusedStoreRemovesNothing) {
  // A corrupt entry and an old temporary in a folder others can write: not ours to tidy.
  std::vector<char> bytes = read_bytes(entry());
  bytes.front() ^= 1;  // the payload, at the front
  write_bytes(entry(), bytes);
  const fs::path orphan = entry().parent_path() / (".tmp." + entry().filename().string() + ".1.00ff");
  write_bytes(orphan, std::string_view("left by a killed writer"));
  fs::last_write_time(orphan, fs::file_time_type::clock::now() - std::chrono::hours(2));
  ASSERT_EQ(::chmod(dir().c_str(), 0757), 0);

  const DiskStore store(dir());
  ASSERT_NE(store.refusal(), "");
  EXPECT_EQ(store.sweep_temporaries(std::chrono::seconds(0)), 0U);
  const base::Result<VerifyResult> verified = verify(store, std::chrono::seconds(0));
  ASSERT_FALSE(verified.has_value());
  EXPECT_EQ(verified.error().message, store.refusal());
  EXPECT_EQ(verified.error().kind, base::Failure::Kind::untrusted);
  const base::Result<GcResult> collected = gc(store, 0);
  ASSERT_FALSE(collected.has_value());
  EXPECT_EQ(collected.error().message, store.refusal());
  EXPECT_EQ(collected.error().kind, base::Failure::Kind::untrusted);
  EXPECT_EQ(read_bytes(entry()), bytes);
  EXPECT_TRUE(fs::exists(orphan));
}

TEST_F(TrustTest, ReadOnlyStoreNeverWritesOrRemoves) {
  const DiskStore fresh(temp.path() / "absent", {.read_only = true, .trusted_dirs = {}});
  const base::Result<void> put = fresh.put(key, payload);
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().kind, base::Failure::Kind::read_only);
  EXPECT_TRUE(contains(failure_of(put), "is read-only"));
  EXPECT_FALSE(fs::exists(temp.path() / "absent")) << "not even the folder";

  const Key bad = key_of("bad");
  ASSERT_TRUE(DiskStore(dir()).put(bad, payload).has_value());
  const fs::path bad_path = DiskStore(dir()).entry_path(bad);
  std::vector<char> bytes = read_bytes(bad_path);
  bytes.front() ^= 1;  // the payload, at the front
  write_bytes(bad_path, bytes);
  const fs::path orphan = entry().parent_path() / (".tmp." + entry().filename().string() + ".1.00ff");
  write_bytes(orphan, std::string_view("left by a killed writer"));
  fs::last_write_time(orphan, fs::file_time_type::clock::now() - std::chrono::hours(2));

  const DiskStore store(dir(), {.read_only = true, .trusted_dirs = {}});
  EXPECT_EQ(store.get(key).payload, payload) << "reading is what it is for";
  const LookupResult got = store.get(bad);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_TRUE(contains(problem_of(got), "payload checksum"));
  EXPECT_FALSE(got.removed);
  EXPECT_EQ(read_bytes(bad_path), bytes);
  EXPECT_FALSE(store.put(key_of("new"), payload).has_value());
  EXPECT_FALSE(fs::exists(store.entry_path(key_of("new"))));

  EXPECT_EQ(store.sweep_temporaries(std::chrono::seconds(0)), 0U);
  const VerifyResult verified = testing::value_of(verify(store, std::chrono::seconds(0)));
  EXPECT_EQ(verified.checked, 2U);
  EXPECT_EQ(verified.bad, 1U);
  EXPECT_EQ(verified.removed, 0U);
  const base::Result<GcResult> collected = gc(store, 0);
  ASSERT_FALSE(collected.has_value());
  EXPECT_EQ(collected.error().kind, base::Failure::Kind::read_only);
  EXPECT_TRUE(contains(collected.error().message, "read-only"));
  EXPECT_EQ(store.clear(), 0U);

  EXPECT_EQ(read_bytes(bad_path), bytes);
  EXPECT_TRUE(fs::exists(entry()));
  EXPECT_TRUE(fs::exists(orphan));
}

// --- every folder on the path (issue 16, must fix 1) --------------------------
// Only the cache folder itself was checked: whoever could write a folder above
// it, or a shard folder, could put another cache or shard in its place.

class PathTrustTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  Key key = key_of("entry");
  std::vector<char> payload = bytes_of("object code");

  // A cache at `dir` holding the entry, made while nothing above is loose.
  fs::path cache_at(const fs::path& dir) {
    fs::create_directories(dir);
    EXPECT_TRUE(DiskStore(dir).put(key, payload).has_value());
    return dir;
  }
  static void make_foreign(const fs::path& path, bool link = false) {
    const int done = link ? ::lchown(path.c_str(), kNobody, kNobody) : ::chown(path.c_str(), kNobody, kNobody);
    ASSERT_EQ(done, 0) << path << ": " << std::strerror(errno);
  }
};

TEST_F(PathTrustTest, AFolderAboveTheCacheThatOthersMayWriteIsRefusedNamingIt) {
  const fs::path project = temp.path() / "project";
  const fs::path dir = cache_at(project / "cache");
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(project.c_str(), 0775), 0);
  const DiskStore store(dir);
  EXPECT_EQ(store.refusal(), project.string() + ": group-writable (mode 0775) (not trusted)");
  EXPECT_EQ(problem_of(store.get(key)), store.refusal());
  // Listed as trusted, the folder (and what lies below it) is accepted.
  EXPECT_EQ(DiskStore(dir, {.trusted_dirs = {project}}).get(key).payload, payload);
  // Listing the cache alone does not vouch for the folders above it.
  EXPECT_EQ(DiskStore(dir, {.trusted_dirs = {dir}}).refusal(), store.refusal());
}

TEST_F(PathTrustTest, ALinkOnThePathIsJudgedWhereItLeads) {
  const fs::path shared = temp.path() / "shared";
  cache_at(shared / "cache");
  fs::create_directory_symlink(shared, temp.path() / "link");
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  const DiskStore store(temp.path() / "link" / "cache");
  EXPECT_EQ(store.refusal(), shared.string() + ": world-writable (mode 0777) (not trusted)");
  EXPECT_FALSE(store.get(key).payload.has_value());
}

TEST_F(PathTrustTest, AStickyFolderIsAcceptedWhenTheNextNameIsTheUsers) {
  const fs::path sticky = temp.path() / "sticky";
  const fs::path dir = cache_at(sticky / "cache");
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);  // like /tmp
  EXPECT_EQ(DiskStore(dir).refusal(), "");
  EXPECT_EQ(DiskStore(dir).get(key).payload, payload);
  ASSERT_EQ(::chmod(sticky.c_str(), 0777), 0);  // not sticky: anyone may rename "cache"
  EXPECT_EQ(DiskStore(dir).refusal(), sticky.string() + ": world-writable (mode 0777) (not trusted)");
}

TEST_F(PathTrustTest, InAStickyFolderANameOfAnotherUsersIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a link to uid 65534 (lchown) needs root; this test runs as uid " << ::geteuid();
  // In a sticky folder the owner of a name may replace it: a link there of
  // someone else's can be pointed anywhere, whatever it points at now.
  const fs::path sticky = temp.path() / "sticky";
  fs::create_directory(sticky);
  const fs::path real = cache_at(temp.path() / "real");
  fs::create_directory_symlink(real, sticky / "cache");
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  EXPECT_EQ(DiskStore(sticky / "cache").refusal(), "");
  make_foreign(sticky / "cache", /*link=*/true);
  EXPECT_EQ(DiskStore(sticky / "cache").refusal(), (sticky / "cache").string() +
                                                       ": owned by uid 65534 (nobody), in the sticky folder " +
                                                       sticky.string() + " that others may write (not trusted)");
}

TEST_F(PathTrustTest, AShardFolderOthersMayWriteIsRefusedNamingIt) {
  const fs::path dir = cache_at(temp.path() / "cache");
  const fs::path shard = DiskStore(dir).entry_path(key).parent_path();
  ASSERT_EQ(::chmod(shard.c_str(), 0770), 0);
  testing::LogCapture log;
  const DiskStore store(dir);
  EXPECT_EQ(store.refusal(), "");
  const LookupResult got = store.get(key);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_EQ(problem_of(got), shard.string() + ": group-writable (mode 0770) (not trusted)");
  ASSERT_TRUE(got.problem.has_value());
  EXPECT_EQ(got.problem->kind, base::Failure::Kind::untrusted);
  EXPECT_FALSE(got.removed);
  EXPECT_TRUE(contains(log.text(), problem_of(got)));
  // Nor is anything stored there.
  const base::Result<void> put = store.put(key, payload);
  ASSERT_FALSE(put.has_value());
  EXPECT_TRUE(contains(failure_of(put), shard.string() + ": group-writable (mode 0770)"));
  // A refusal is not remembered: put right, the shard is used.
  ASSERT_EQ(::chmod(shard.c_str(), 0700), 0);
  EXPECT_EQ(store.get(key).payload, payload);
}

TEST_F(PathTrustTest, AShardThatIsALinkIsJudgedWhereItLeads) {
  const fs::path dir = cache_at(temp.path() / "cache");
  const fs::path entry = DiskStore(dir).entry_path(key);
  const fs::path elsewhere = temp.path() / "elsewhere";
  fs::create_directory(elsewhere);
  fs::copy_file(entry, elsewhere / entry.filename());
  fs::remove_all(entry.parent_path());
  fs::create_directory_symlink(elsewhere, entry.parent_path());
  ASSERT_EQ(::chmod(elsewhere.c_str(), 0700), 0);
  EXPECT_EQ(DiskStore(dir).get(key).payload, payload) << "a link to a trusted folder is fine";
  ASSERT_EQ(::chmod(elsewhere.c_str(), 0777), 0);
  EXPECT_EQ(problem_of(DiskStore(dir).get(key)), elsewhere.string() + ": world-writable (mode 0777) (not trusted)");
}

TEST_F(PathTrustTest, ACacheFolderMadeAfterTheStoreWasOpenedIsJudgedThen) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to uid 65534 (chown) needs root; this test runs as uid " << ::geteuid();
  // Missing when the store was opened: someone else made it meanwhile.
  const fs::path sticky = temp.path() / "sticky";
  fs::create_directory(sticky);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  const fs::path dir = sticky / "cache";
  const DiskStore store(dir);
  EXPECT_EQ(store.refusal(), "");
  cache_at(dir);
  make_foreign(dir);
  const LookupResult got = store.get(key);
  EXPECT_FALSE(got.payload.has_value());
  EXPECT_TRUE(contains(problem_of(got), dir.string() + ": owned by uid 65534 (nobody)")) << problem_of(got);
  EXPECT_FALSE(store.put(key_of("other"), payload).has_value());
}

TEST(CheckPathTrustTest, RootAndTheTemporaryFolderPass) {
  EXPECT_TRUE(check_path_trust("/", {}, ::geteuid()).has_value());
  EXPECT_TRUE(check_path_trust("/nonexistent/kiln/cache", {}, ::geteuid()).has_value()) << "missing: made 0700 later";
  testing::TempFolder temp;
  EXPECT_EQ(failure_of(check_path_trust(temp.path(), {}, ::geteuid())), "");
  EXPECT_EQ(failure_of(check_path_trust(temp.path() / "." / ".." / temp.path().filename(), {}, ::geteuid())), "");
}

}  // namespace
}  // namespace kiln::cache
