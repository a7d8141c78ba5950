// The processes crash_test.cpp starts, kills and waits for; the first
// argument picks what this one does:
//   resolve RD...            a Runtime configured from KILN_* resolves and runs the
//                            kernel for each rd_o_cvd and checks the outputs
//   hold-lock FILE           takes the build lock FILE and waits to be killed
//   hold-index DB            holds BEGIN EXCLUSIVE on the SQLite file DB until killed
//   inspect DIR              lists DIR's files and checks every entry file in it
//   as-user UID MODE...      drops to UID (and its gid), then runs MODE...
//   in-tmpfs SIZE DIR MODE... mounts a tmpfs of SIZE on DIR in a mount namespace of
//                            its own, runs MODE..., then inspects DIR there
// Output is "name value" lines on stdout, flushed as they are written, so the
// test sees how far a process got before it was killed.
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "cache/build_lock.hpp"
#include "cache/disk_store.hpp"
#include "tests/api/crash_case.hpp"

namespace {

namespace fs = std::filesystem;
namespace crash = kiln::testing::crash;
using kiln::KernelMetrics;
using kiln::Runtime;
namespace cache = kiln::cache;

constexpr int kSkipped = 77;  // in-tmpfs: the mount is not permitted here

void say(const std::string& name, const std::string& value) {
  std::printf("%s %s\n", name.c_str(), value.c_str());
  std::fflush(stdout);
}

int resolve(int argc, char** argv) {
  auto rt = std::make_unique<Runtime>();
  say("ready", "1");
  for (int i = 0; i < argc; ++i) {
    std::string key;
    if (const std::string wrong = crash::run_and_check(*rt, crash::rd_from(argv[i]), &key);
        !wrong.empty()) {
      std::fprintf(stderr, "crash_child: wrong output for rd_o_cvd %s: %s\n", argv[i], wrong.c_str());
      return 1;
    }
    say("key", key);
  }
  const KernelMetrics total = rt->metrics().total();
  say("compiles", std::to_string(total.compiles));
  say("disk_hits", std::to_string(total.disk_hits));
  const auto start = std::chrono::steady_clock::now();
  rt.reset();  // what ending costs: the index's hit counts are written here
  say("end_ms", std::to_string(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()));
  say("ok", "1");
  return 0;
}

// Never returns while it holds: the test ends it with SIGKILL.
int hold_lock(const char* file) {
  cache::BuildLock lock = cache::BuildLock::acquire(file, std::chrono::milliseconds(0));
  if (!lock.held()) {
    std::fprintf(stderr, "crash_child: cannot take %s: %s\n", file, lock.problem().c_str());
    return 1;
  }
  say("held", file);
  for (;;) ::pause();
}

int hold_index(const char* db_path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path, &db) != SQLITE_OK ||
      sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "crash_child: cannot lock %s: %s\n", db_path, sqlite3_errmsg(db));
    return 1;
  }
  say("held", db_path);
  for (;;) ::pause();
}

// "file REL SIZE" for every file; "entry KEY ok" or "entry KEY bad WHY" for
// each entry file, as DiskStore reads it (which also removes a bad one).
int inspect(const fs::path& dir) {
  const cache::DiskStore store(dir);
  for (const fs::directory_entry& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    say("file", fs::relative(f.path(), dir).string() + " " + std::to_string(f.file_size()));
  }
  for (const fs::path& file : kiln::testing::entry_files(dir)) {
    cache::Key key;
    if (!cache::Key::from_hex(file.parent_path().filename().string() + file.filename().string(), key)) continue;
    const cache::LookupResult found = store.get(key);
    say("entry", key.hex() + (found.payload ? " ok" : " bad " + (found.problem ? found.problem->message : "")));
  }
  return 0;
}

int run_mode(int argc, char** argv);

// Runs MODE... in a new process of this program, so that what it sets up
// (user, mount) is all it inherits; returns its exit status.
int run_self(char** argv) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::execv("/proc/self/exe", argv);
    ::_exit(127);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int as_user(int argc, char** argv) {
  const uid_t uid = static_cast<uid_t>(std::stoul(argv[0]));
  if (::setgid(uid) != 0 || ::setuid(uid) != 0) {
    std::fprintf(stderr, "crash_child: cannot become uid %u: %s\n", uid, std::strerror(errno));
    return 1;
  }
  return run_mode(argc - 1, argv + 1);
}

int skipped(const char* what) {
  say("skip", std::string(what) + ": " + std::strerror(errno));
  return kSkipped;
}

// The mount lives only in this process's namespace: it vanishes with it, and
// no other process (nor the host) ever sees a full disk.
int in_tmpfs(char** argv) {
  const std::string options = std::string("size=") + argv[0] + ",mode=0700";
  if (::unshare(CLONE_NEWNS) != 0) return skipped("unshare(CLONE_NEWNS)");
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return skipped("mount(MS_PRIVATE)");
  if (::mount("tmpfs", argv[1], "tmpfs", 0, options.c_str()) != 0) return skipped("mount(tmpfs)");
  say("mounted", argv[1]);
  std::vector<char*> inner = {const_cast<char*>("crash_child")};
  for (char** a = argv + 2; *a; ++a) inner.push_back(*a);
  inner.push_back(nullptr);
  const int status = run_self(inner.data());
  say("status", std::to_string(status));
  inspect(argv[1]);
  return status;
}

int run_mode(int argc, char** argv) {
  if (argc < 1) throw std::invalid_argument("no mode");
  const std::string mode = argv[0];
  if (mode == "resolve") return resolve(argc - 1, argv + 1);
  if (mode == "hold-lock" && argc == 2) return hold_lock(argv[1]);
  if (mode == "hold-index" && argc == 2) return hold_index(argv[1]);
  if (mode == "inspect" && argc == 2) return inspect(argv[1]);
  if (mode == "as-user" && argc >= 3) return as_user(argc - 1, argv + 1);
  if (mode == "in-tmpfs" && argc >= 4) return in_tmpfs(argv + 1);
  throw std::invalid_argument("unknown mode or wrong arguments: " + mode);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_mode(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crash_child: %s\n", e.what());
    return 1;
  }
}
