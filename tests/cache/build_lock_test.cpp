// The per-key build lock: exclusive between descriptors, threads and
// processes; a wait times out; a dead holder's lock is released by the kernel.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "cache/build_lock.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

using namespace std::chrono_literals;
using testing::TempFolder;

TEST(BuildLock, ExcludesASecondHolderUntilReleased) {
  TempFolder dir;
  const auto path = dir.path() / "ab" / "cdef.lock";  // the folder is made on demand
  {
    const BuildLock first = BuildLock::acquire(path, 0ms);
    ASSERT_TRUE(first.held()) << first.problem();
    // Making the folder and the file is not waiting: nobody held the lock.
    EXPECT_EQ(first.waited(), std::chrono::steady_clock::duration::zero());
    const BuildLock second = BuildLock::acquire(path, 20ms);
    EXPECT_EQ(second.outcome(), BuildLock::Outcome::timed_out);
    EXPECT_NE(second.problem().find(path.string()), std::string::npos) << second.problem();
    EXPECT_GE(second.waited(), 20ms);
  }
  EXPECT_TRUE(BuildLock::acquire(path, 0ms).held());
  EXPECT_TRUE(std::filesystem::exists(path));  // lock files stay
}

TEST(BuildLock, AWaitingThreadGetsTheLockWhenTheHolderReleases) {
  TempFolder dir;
  const auto path = dir.path() / "k.lock";
  auto holder = std::make_unique<BuildLock>(BuildLock::acquire(path, 0ms));
  ASSERT_TRUE(holder->held());
  std::atomic<bool> waiting{false};
  BuildLock::Outcome got = BuildLock::Outcome::unsupported;
  std::thread waiter([&] {
    waiting = true;
    got = BuildLock::acquire(path, 60s).outcome();
  });
  while (!waiting) std::this_thread::yield();
  std::this_thread::sleep_for(20ms);  // let it find the lock taken
  holder.reset();
  waiter.join();
  EXPECT_EQ(got, BuildLock::Outcome::acquired);
}

// A child takes the lock and stops; killed, it never releases it itself.
TEST(BuildLock, ALockHeldByAKilledProcessIsReleased) {
  TempFolder dir;
  const auto path = dir.path() / "k.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const BuildLock lock = BuildLock::acquire(path, 0ms);
    const char state = lock.held() ? 'y' : 'n';
    (void)!::write(ready[1], &state, 1);
    for (;;) ::pause();
  }
  char state = 0;
  ASSERT_EQ(::read(ready[0], &state, 1), 1);
  ASSERT_EQ(state, 'y');
  EXPECT_EQ(BuildLock::acquire(path, 0ms).outcome(), BuildLock::Outcome::timed_out);  // the child holds it
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(BuildLock::acquire(path, 30s).held());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(BuildLock, AnUnusableLockFileIsUnsupportedAndSaysWhy) {
  TempFolder dir;
  std::ofstream(dir.path() / "plain-file") << "x";
  const auto path = dir.path() / "plain-file" / "k.lock";  // its folder is a file
  const BuildLock lock = BuildLock::acquire(path, 10ms);
  EXPECT_EQ(lock.outcome(), BuildLock::Outcome::unsupported);
  EXPECT_NE(lock.problem().find("plain-file"), std::string::npos) << lock.problem();
}

}  // namespace
}  // namespace kiln::cache
