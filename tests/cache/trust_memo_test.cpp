// The trust walk's process-wide memo (issue 34, item 2): a cache folder
// found trusted is looked at again, not walked, by the next Runtime; whatever
// a later walk would judge differently (a folder made writable by others,
// given away, replaced; a link swapped; a missing folder made) is walked
// again and refused where the walk without a memo refused it.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/trust.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::key_of;

class TrustMemoTest : public ::testing::Test {
 protected:
  void SetUp() override { forget_path_trust(); }
  // Walks made by `check` (0: the memo answered).
  template <class F>
  static std::uint64_t walks_of(F check) {
    const std::uint64_t before = path_trust_walks();
    check();
    return path_trust_walks() - before;
  }
  static std::string refusal_of(const fs::path& path, std::span<const fs::path> trusted = {}) {
    const base::Result<void> checked = check_path_trust(path, trusted, ::geteuid());
    return checked ? std::string() : checked.error().message;
  }
  fs::path made(const fs::path& path, mode_t mode = 0700) {
    fs::create_directories(path);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0) << path << ": " << std::strerror(errno);
    return path;
  }
  testing::TempFolder temp;
};

TEST_F(TrustMemoTest, ASecondCheckOfAnUnchangedFolderLooksButDoesNotWalk) {
  const fs::path dir = made(temp.path() / "project" / "cache");
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(dir), ""); }), 1U);
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(dir), ""); }), 0U);
  // As a DiskStore (what a Runtime opens) checks it.
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(DiskStore(dir).refusal(), ""); }), 0U);
  // Another folder is walked on its own.
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(made(temp.path() / "other")), ""); }), 1U);
}

TEST_F(TrustMemoTest, AFolderAboveMadeWritableByOthersAfterTheFirstWalkIsRefused) {
  const fs::path project = made(temp.path() / "project", 0755);
  const fs::path dir = made(project / "cache");
  const DiskStore first(dir);
  ASSERT_TRUE(first.put(key_of("entry"), bytes_of("object code")).has_value());
  EXPECT_EQ(first.refusal(), "");
  ASSERT_EQ(::chmod(project.c_str(), 0775), 0);
  EXPECT_EQ(DiskStore(dir).refusal(), project.string() + ": group-writable (mode 0775) (not trusted)");
  // Trusted again once the mode is back.
  ASSERT_EQ(::chmod(project.c_str(), 0755), 0);
  EXPECT_EQ(DiskStore(dir).refusal(), "");
}

TEST_F(TrustMemoTest, TheCacheFolderItselfMadeWorldWritableIsRefused) {
  const fs::path dir = made(temp.path() / "cache");
  EXPECT_EQ(refusal_of(dir), "");
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(refusal_of(dir), dir.string() + ": world-writable (mode 0777)");
}

TEST_F(TrustMemoTest, AFolderReplacedByALinkToALooseFolderIsRefused) {
  const fs::path dir = made(temp.path() / "project" / "cache");
  const fs::path loose = made(temp.path() / "loose", 0777);
  made(loose / "cache");
  EXPECT_EQ(refusal_of(dir), "");
  fs::rename(temp.path() / "project", temp.path() / "old-project");
  fs::create_directory_symlink(loose, temp.path() / "project");
  EXPECT_EQ(refusal_of(dir), loose.string() + ": world-writable (mode 0777)");
}

TEST_F(TrustMemoTest, ALinkOnThePathSwappedForAnotherIsJudgedWhereTheNewOneLeads) {
  const fs::path good = made(temp.path() / "good");
  const fs::path loose = made(temp.path() / "loose", 0777);
  made(good / "cache");
  made(loose / "cache");
  const fs::path link = temp.path() / "link";
  fs::create_directory_symlink(good, link);
  EXPECT_EQ(refusal_of(link / "cache"), "");
  // Swapped by rename, as an attacker would (atomically): a new link.
  fs::create_directory_symlink(loose, temp.path() / "link.new");
  fs::rename(temp.path() / "link.new", link);
  EXPECT_EQ(refusal_of(link / "cache"), loose.string() + ": world-writable (mode 0777)");
}

TEST_F(TrustMemoTest, AFolderMissingAtTheFirstWalkAndMadeLooseAfterIsRefused) {
  const fs::path dir = temp.path() / "later" / "cache";
  EXPECT_EQ(refusal_of(dir), "") << "missing: kiln would make it 0700";
  made(temp.path() / "later", 0777);
  made(dir);
  EXPECT_EQ(refusal_of(dir), (temp.path() / "later").string() + ": world-writable (mode 0777)");
}

TEST_F(TrustMemoTest, AFolderGivenToAnotherUserAfterTheFirstWalkIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a folder to uid 65534 (chown) needs root; this test runs as uid " << ::geteuid();
  const fs::path project = made(temp.path() / "project", 0755);
  const fs::path dir = made(project / "cache");
  EXPECT_EQ(refusal_of(dir), "");
  ASSERT_EQ(::chown(project.c_str(), 65534, 65534), 0) << std::strerror(errno);
  EXPECT_NE(refusal_of(dir).find(project.string() + ": owned by uid 65534"), std::string::npos) << refusal_of(dir);
}

TEST_F(TrustMemoTest, RefusalsAndWalksThatConsultTrustedFoldersAreNotRemembered) {
  const fs::path loose = made(temp.path() / "loose", 0777);
  const fs::path dir = made(loose / "cache");
  EXPECT_EQ(walks_of([&] { EXPECT_NE(refusal_of(dir), ""); }), 1U);
  EXPECT_EQ(walks_of([&] { EXPECT_NE(refusal_of(dir), ""); }), 1U);
  const std::vector<fs::path> trusted = {loose};
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(dir, trusted), ""); }), 1U);
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(dir, trusted), ""); }), 1U);
  // Remembered without the trusted folders is not trusted through them: the
  // other way round, a walk that never consulted them holds whatever they are.
  const fs::path own = made(temp.path() / "own");
  EXPECT_EQ(refusal_of(own), "");
  EXPECT_EQ(walks_of([&] { EXPECT_EQ(refusal_of(own, trusted), ""); }), 0U);
}

}  // namespace
}  // namespace kiln::cache
