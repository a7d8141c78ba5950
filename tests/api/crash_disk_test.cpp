// The cache's storage failing under whole processes: a full disk, an index
// another process has locked or that is garbage, a read-only cache folder.
// kiln must go on (in-memory kernels, right outputs), warn once, and leave
// nothing partial behind. The cache layer's own tests (tests/cache) drive the
// same failures one call at a time.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "cache/index.hpp"
#include "tests/api/child_process.hpp"
#include "tests/api/crash_case.hpp"
#include "tests/support/toolchain_copy.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using crash::text_of;

constexpr const char* kStoreWarning = "cannot store in the kernel cache";

// rd_o_cvd values of `n` specialisations starting at `first`.
std::vector<std::string> rds(int n, double first) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(text_of(first + i * 1e-3));
  return out;
}

std::vector<std::string> concat(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Runs crash_child ARGS on `dir` to its end; expects it to succeed.
std::unique_ptr<ChildProcess> run_to_end(const std::vector<std::string>& args, const fs::path& dir,
                                         const fs::path& log, std::map<std::string, std::string> env = {}) {
  auto child = crash_child(args, dir, log, std::move(env));
  child->read_all(120s);
  EXPECT_TRUE(child->wait(10s)) << "hangs: " << args[0];
  return child;
}

std::uint64_t count(const ChildProcess& child, const std::string& name) {
  return static_cast<std::uint64_t>(child.number(name));
}

// ---------------------------------------------------------------------------
// Full disk

// Warning lines in a child's log: each one at most once.
int warnings_in(const std::string& log) {
  int n = 0;
  std::set<std::string> seen;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("[warning]") == std::string::npos && line.find("[error]") == std::string::npos) continue;
    ++n;
    const std::string what = line.substr(line.find("] [") + 3);  // without the time stamp
    EXPECT_TRUE(seen.insert(what.substr(0, what.find('('))).second) << "said twice: " << line;
  }
  return n;
}

// A 64 KiB tmpfs (mounted by the child in a mount namespace of its own) as the
// cache folder: an entry or two fits, then writes fail with ENOSPC. The child
// lists and checks the folder's files before the mount goes away.
class CrashFullDisk : public ::testing::Test {
 protected:
  TempDir scratch;
  fs::path dir = scratch.path() / "cache";
  const std::vector<std::string> specs = rds(16, 0.5);

  // Resolves every spec with the cache on the full disk; returns the log, or
  // nothing when mounting is not permitted here.
  std::optional<std::string> run_on_full_disk(std::map<std::string, std::string> env) {
    fs::create_directories(dir);
    auto child = run_to_end(concat({"in-tmpfs", "64k", dir.string(), "resolve"}, specs), dir,
                            scratch.path() / "err", std::move(env));
    if (const std::string reason = child->value("skip"); !reason.empty()) {
      std::printf("cannot mount a tmpfs here: %s\n", reason.c_str());
      return std::nullopt;
    }
    const std::string log = child->stderr_text();
    EXPECT_TRUE(child->exited_ok()) << log;
    EXPECT_EQ(child->value("ok"), "1") << log;
    EXPECT_EQ(count(*child, "compiles"), specs.size());
    EXPECT_EQ(count_of(log, kStoreWarning), 1) << log;
    int entries = 0;
    for (const std::string& line : child->read_all(0ms)) {
      if (line.starts_with("entry ")) {
        EXPECT_TRUE(line.ends_with(" ok")) << "a partial entry: " << line;
        ++entries;
      }
      if (line.starts_with("file ")) {
        EXPECT_EQ(line.find(".tmp."), std::string::npos) << "a temporary left: " << line;
      }
    }
    std::printf("%d of %zu entries fit before the disk was full\n", entries, specs.size());
    EXPECT_LT(entries, static_cast<int>(specs.size())) << "the disk never filled up";
    return log;
  }
};

// The index elsewhere: the store's is the only warning.
TEST_F(CrashFullDisk, RuntimeGoesOnInMemoryWarnsOnceLeavesNothingPartial) {
  const auto log = run_on_full_disk({{"KILN_INDEX_PATH", (scratch.path() / "index.sqlite").string()}});
  if (!log) GTEST_SKIP() << "mounting a tmpfs is not permitted here (see above)";
  EXPECT_EQ(warnings_in(*log), 1) << *log;
}

// The index on the full disk too: it fails as well, and says so once.
TEST_F(CrashFullDisk, IndexOnTheFullDiskToo) {
  const auto log = run_on_full_disk({});
  if (!log) GTEST_SKIP() << "mounting a tmpfs is not permitted here (see above)";
  EXPECT_LE(count_of(*log, "kiln cache index"), 1) << *log;  // the index warns once however often it fails
  EXPECT_LE(warnings_in(*log), 2) << *log;
}

// ---------------------------------------------------------------------------
// The index

class CrashIndex : public ::testing::Test {
 protected:
  TempDir scratch;
  fs::path dir = scratch.path() / "cache";
  const std::vector<std::string> on_disk = rds(1, 0.6);
  const std::vector<std::string> fresh = rds(1, 0.7);

  void SetUp() override {
    auto first = run_to_end(concat({"resolve"}, on_disk), dir, scratch.path() / "first.log");
    ASSERT_TRUE(first->exited_ok()) << first->stderr_text();
    // A compile notes its entry in the journal; opening the index folds it in.
    ASSERT_EQ(cache::Index(dir / "index.sqlite").list().size(), 1u);
  }

  // A process that loads and one that compiles, at the same time: both right.
  // Returns their logs.
  std::vector<std::string> expect_load_and_compile_succeed() {
    auto loader = crash_child(concat({"resolve"}, on_disk), dir, scratch.path() / "loader.log");
    auto compiler = crash_child(concat({"resolve"}, fresh), dir, scratch.path() / "compiler.log");
    for (ChildProcess* child : {loader.get(), compiler.get()}) {
      child->read_all(120s);
      EXPECT_TRUE(child->wait(10s)) << "hangs";
      EXPECT_TRUE(child->exited_ok()) << child->stderr_text();
      EXPECT_EQ(child->value("ok"), "1") << child->stderr_text();
      // Only to show that ending does not hang: the busy wait is bounded (200 ms).
      EXPECT_LT(child->number("end_ms"), 5000.0);
      std::printf("ending took %s ms\n", child->value("end_ms").c_str());
    }
    EXPECT_EQ(count(*loader, "disk_hits"), 1u);
    EXPECT_EQ(count(*loader, "compiles"), 0u);
    EXPECT_EQ(count(*compiler, "compiles"), 1u);
    return {loader->stderr_text(), compiler->stderr_text()};
  }

  // Entries are the truth: the one compiled meanwhile was stored regardless.
  void expect_both_on_disk() {
    auto later = run_to_end(concat(concat({"resolve"}, on_disk), fresh), dir, scratch.path() / "later.log");
    EXPECT_TRUE(later->exited_ok()) << later->stderr_text();
    EXPECT_EQ(count(*later, "disk_hits"), 2u);
  }
};

// Another process holds BEGIN EXCLUSIVE on the index the whole time.
TEST_F(CrashIndex, LockedByAnotherProcess) {
  auto holder = crash_child({"hold-index", (dir / "index.sqlite").string()}, dir, scratch.path() / "holder.log");
  ASSERT_TRUE(holder->read_line(30s)) << holder->stderr_text();
  // Neither met the lock: a loader and a compiler never open the index, they
  // note their hit or their new entry in the journal beside it.
  for (const std::string& log : expect_load_and_compile_succeed())
    EXPECT_EQ(log.find("database is locked"), std::string::npos) << log;
  EXPECT_TRUE(holder->running()) << "the holder let go early: " << holder->stderr_text();
  holder->kill(SIGKILL);
  ASSERT_TRUE(holder->wait(10s));
  expect_both_on_disk();
  // Folded in when the index is next opened, the locked time lost nothing:
  // the row of the entry compiled meanwhile, and every hit (the loader's and
  // the later run's on the older entry, the later run's on the new one).
  std::vector<cache::IndexRecord> records = cache::Index(dir / "index.sqlite").list();
  ASSERT_EQ(records.size(), 2u);
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.hits > b.hits; });
  EXPECT_EQ(records[0].hits, 2);
  EXPECT_EQ(records[1].hits, 1);
}

// Garbage at the index's path is not kiln's index: refused and left as it
// is (cache/index_identity.hpp), and the runs go on without an index.
TEST_F(CrashIndex, GarbageFile) {
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(dir / (std::string("index.sqlite") + suffix));
  std::mt19937 rng(7);
  std::string garbage(8192, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  std::ofstream(dir / "index.sqlite", std::ios::binary | std::ios::trunc) << garbage;
  expect_load_and_compile_succeed();
  expect_both_on_disk();
  std::ifstream kept(dir / "index.sqlite", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), garbage) << "the garbage was replaced";
  // SetUp's opening of the index folded its journal in and left it empty.
  const fs::path journal = dir / "index.sqlite.journal";
  EXPECT_TRUE(!fs::exists(journal) || fs::file_size(journal) == 0) << "the journal beside it was written";
}

// ---------------------------------------------------------------------------
// A read-only cache folder

// True when permission bits do not stop this process (root, CAP_DAC_OVERRIDE):
// probed, not guessed from the user id.
bool permissions_are_bypassed(const fs::path& scratch) {
  const fs::path folder = scratch / "probe";
  fs::create_directory(folder);
  ::chmod(folder.c_str(), 0500);
  const bool bypassed = std::ofstream(folder / "file").good();
  ::chmod(folder.c_str(), 0700);
  fs::remove_all(folder);
  return bypassed;
}

// What a child running as `uid` reads or writes after it dropped root, in
// `scratch` (which it owns) instead of where the build tree lies: the build
// tree may sit under a folder only root can enter (a clone in `mktemp -d`,
// 0700). So the compiler module, and the compile worker beside it when there
// is one, are copied there (KILN_COMPILER_MODULE), and its temporary and
// runtime folders are its own. Returns the child's extra environment.
std::map<std::string, std::string> own_copies_for(uid_t uid, const fs::path& scratch) {
  const fs::path module = KILN_TEST_COMPILER_MODULE;
  const fs::path tmp = scratch / "tmp", run = scratch / "run";
  for (const fs::path& folder : {tmp, run}) {
    fs::create_directories(folder);
    EXPECT_EQ(::chown(folder.c_str(), uid, uid), 0) << folder;
  }
  ::chmod(run.c_str(), 0700);
  const std::string copy = copy_toolchain_for(uid, scratch / "toolchain", module);
  EXPECT_FALSE(copy.empty()) << "cannot hand " << scratch / "toolchain" << " to uid " << uid;
  return {{"KILN_COMPILER_MODULE", copy},
          {"TMPDIR", tmp.string()},
          {"XDG_RUNTIME_DIR", run.string()}};
}

// Root ignores the folder's mode: then the Runtime runs as `nobody`, which
// owns the folder (read-only to it) and the scratch tree above, with its own
// copies of what it reads from the build tree (own_copies_for()).
TEST(CrashReadOnly, CacheFolderRuntimeGoesOnInMemoryWarnsOnce) {
  TempDir scratch;
  const fs::path dir = scratch.path() / "cache";
  fs::create_directories(dir);
  std::vector<std::string> args = concat({"resolve"}, rds(3, 0.8));
  std::map<std::string, std::string> env;
  if (permissions_are_bypassed(scratch.path())) {
    constexpr uid_t kNobody = 65534;
    ASSERT_EQ(::chown(scratch.path().c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown(dir.c_str(), kNobody, kNobody), 0);
    env = own_copies_for(kNobody, scratch.path());
    args.insert(args.begin(), {"as-user", std::to_string(kNobody)});
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0500), 0);
  auto child = run_to_end(args, dir, scratch.path() / "err", env);
  const std::string log = child->stderr_text();
  EXPECT_TRUE(child->exited_ok()) << log;
  EXPECT_EQ(child->value("ok"), "1") << log;
  EXPECT_EQ(count(*child, "compiles"), 3u);
  EXPECT_EQ(count_of(log, kStoreWarning), 1) << log;
  // The build lock cannot be made there either: the store's warning says it all.
  EXPECT_EQ(warnings_in(log), 1) << log;
  EXPECT_TRUE(fs::is_empty(dir)) << "something was written to the read-only folder";
}

}  // namespace
}  // namespace kiln::testing
