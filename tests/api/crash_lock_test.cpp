// The holder of a build lock killed with SIGKILL while other processes wait
// on it: the kernel drops the lock with its holder, so the waiters go on
// within moments, not after the lock timeout, and compile once between them.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "tests/api/child_process.hpp"
#include "tests/api/crash_case.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using crash::entry_file_of;
using crash::lock_file_of;
using crash::ms_since;
using crash::text_of;

// The key of rd's kernel: derived inside the runtime, so resolved once in a
// scratch cache with the same settings.
std::string key_for(double rd, const fs::path& scratch_cache) {
  Runtime rt(config_for(scratch_cache));
  std::string key;
  EXPECT_EQ(crash::run_and_check(rt, rd, &key), "");
  return key;
}

class CrashBuildLock : public ::testing::Test {
 protected:
  static constexpr int kWaiters = 3;
  TempDir scratch;
  fs::path dir = scratch.path() / "cache";

  // Waiters resolve rd while `holder` holds the key's lock; the holder is
  // killed; they must go on within seconds (the lock timeout is 60 s), compile
  // once between them and give the right outputs.
  void expect_waiters_go_on_after_killing(ChildProcess& holder, double rd, const std::string& key) {
    std::vector<std::unique_ptr<ChildProcess>> waiters;
    for (int i = 0; i < kWaiters; ++i) {
      const fs::path log = scratch.path() / ("waiter-" + std::to_string(i) + ".log");
      waiters.push_back(crash_child({"resolve", text_of(rd)}, dir, log, {{"KILN_LOCK_TIMEOUT", "60"}}));
      ASSERT_TRUE(waiters.back()->read_line(30s)) << waiters.back()->stderr_text();
    }
    std::this_thread::sleep_for(1s);  // time to find no entry and start waiting on the lock
    for (auto& waiter : waiters) ASSERT_TRUE(waiter->running()) << "did not wait: " << waiter->stderr_text();
    ASSERT_TRUE(is_locked(lock_file_of(dir, key)));
    ASSERT_FALSE(fs::exists(entry_file_of(dir, key)));

    holder.kill(SIGKILL);
    const auto killed = Clock::now();
    ASSERT_TRUE(holder.wait(10s));
    std::uint64_t compiles = 0, hits = 0;
    double slowest_ms = 0;
    for (auto& waiter : waiters) {
      ASSERT_TRUE(waiter->wait(30s)) << "a waiter hangs";
      slowest_ms = std::max(slowest_ms, ms_since(killed));
      waiter->read_all(5s);
      EXPECT_TRUE(waiter->exited_ok()) << waiter->stderr_text();
      EXPECT_EQ(waiter->value("ok"), "1");
      EXPECT_EQ(waiter->value("key"), key);
      EXPECT_EQ(waiter->stderr_text(), "") << "no warning expected (a timed-out lock?)";
      compiles += static_cast<std::uint64_t>(waiter->number("compiles"));
      hits += static_cast<std::uint64_t>(waiter->number("disk_hits"));
    }
    std::printf("waiters done %.0f ms after the kill\n", slowest_ms);
    EXPECT_LT(slowest_ms, 10'000) << "the lock went with the timeout, not with its holder";
    EXPECT_EQ(compiles, 1u);
    EXPECT_EQ(hits, kWaiters - 1u);
    EXPECT_TRUE(fs::exists(entry_file_of(dir, key)));
  }
};

// The holder only holds the lock, as a compiler would.
TEST_F(CrashBuildLock, HolderKilledWhileOthersWait) {
  const double rd = 0.2;
  const std::string key = key_for(rd, scratch.path() / "keys");
  auto holder = crash_child({"hold-lock", lock_file_of(dir, key).string()}, dir, scratch.path() / "holder.log");
  ASSERT_TRUE(holder->read_line(30s)) << holder->stderr_text();
  expect_waiters_go_on_after_killing(*holder, rd, key);
}

// A real writer, stopped (SIGSTOP) as soon as it holds the lock, in the
// middle of compiling; killed while stopped.
TEST_F(CrashBuildLock, WriterKilledInTheMiddleOfCompiling) {
  const double rd = 0.21;
  const std::string key = key_for(rd, scratch.path() / "keys");
  auto writer = crash_child({"resolve", text_of(rd)}, dir, scratch.path() / "writer.log");
  ASSERT_TRUE(writer->read_line(30s)) << writer->stderr_text();
  const auto deadline = Clock::now() + 30s;
  while (!is_locked(lock_file_of(dir, key)) && writer->running() && Clock::now() < deadline)
    std::this_thread::sleep_for(200us);
  writer->kill(SIGSTOP);
  ASSERT_TRUE(writer->running()) << "the writer ended before it was stopped: " << writer->stderr_text();
  ASSERT_FALSE(fs::exists(entry_file_of(dir, key))) << "stopped too late: the entry is out";
  expect_waiters_go_on_after_killing(*writer, rd, key);
}

}  // namespace
}  // namespace kiln::testing
