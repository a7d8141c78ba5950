// The node-wide compile limit: N lock files, each held by one compile.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/compile/build_slots.hpp"
#include "tests/runtime/temp_folder_test.hpp"

namespace kiln::runtime {
namespace {

using Clock = std::chrono::steady_clock;

class BuildSlotsTest : public testing::TempFolderTest {
 protected:
  std::filesystem::path folder() const { return temp_folder() / "slots"; }
};

TEST_F(BuildSlotsTest, AtMostCountHeldAtOnce) {
  const BuildSlots slots(2, folder());
  ASSERT_TRUE(slots.problem().empty()) << slots.problem();
  std::optional<BuildSlots::Slot> a = slots.try_take(), b = slots.try_take();
  ASSERT_TRUE(a && a->held());
  ASSERT_TRUE(b && b->held());
  EXPECT_FALSE(slots.try_take().has_value());
  a->release();
  std::optional<BuildSlots::Slot> c = slots.try_take();
  EXPECT_TRUE(c && c->held());
  EXPECT_EQ(std::filesystem::status(folder()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
}

TEST_F(BuildSlotsTest, ZeroMeansNoLimit) {
  const BuildSlots slots(0, folder());
  for (int i = 0; i < 5; ++i) {
    std::optional<BuildSlots::Slot> s = slots.try_take();
    ASSERT_TRUE(s.has_value());
    EXPECT_FALSE(s->held());  // a free pass
  }
  EXPECT_FALSE(std::filesystem::exists(folder()));
}

// Unset: one slot per CPU online on the machine (not this process's
// affinity: the slots are the node's), counted on first use.
TEST_F(BuildSlotsTest, UnsetCountIsTheMachinesCpus) {
  const BuildSlots slots(std::nullopt, folder());
  EXPECT_EQ(slots.count(), std::max(std::thread::hardware_concurrency(), 1u));
  std::optional<BuildSlots::Slot> s = slots.try_take();
  EXPECT_TRUE(s && s->held());
}

TEST_F(BuildSlotsTest, WaitEndsWhenGivenUpOrPastTheDeadline) {
  const BuildSlots slots(1, folder());
  std::optional<BuildSlots::Slot> only = slots.try_take();
  ASSERT_TRUE(only && only->held());
  int asked = 0;
  EXPECT_FALSE(slots.take(Clock::now() + std::chrono::seconds(60), [&] { return ++asked == 3; }).has_value());
  EXPECT_EQ(asked, 3);
  std::optional<BuildSlots::Slot> late = slots.take(Clock::now() + std::chrono::milliseconds(20));
  ASSERT_TRUE(late.has_value());
  EXPECT_FALSE(late->held());  // past the deadline: compile anyway
}

TEST_F(BuildSlotsTest, ASlotFreedByItsHolderIsTakenByAWaiter) {
  const BuildSlots slots(1, folder());
  std::optional<BuildSlots::Slot> only = slots.try_take();
  ASSERT_TRUE(only && only->held());
  int asked = 0;
  std::optional<BuildSlots::Slot> next = slots.take(Clock::now() + std::chrono::seconds(60), [&] {
    if (++asked == 2) only.reset();  // the holder finishes while we wait
    return false;
  });
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->held());
}

// A child that takes a slot of `folder` and then stops itself (SIGSTOP) or
// sleeps; killed when the test ends.
class SlotHolder {
 public:
  SlotHolder(const std::filesystem::path& folder, unsigned count, bool stop) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      const BuildSlots slots(count, folder);
      std::optional<BuildSlots::Slot> slot = slots.try_take();
      const char held = slot && slot->held() ? 1 : 0;
      (void)!::write(ready[1], &held, 1);
      if (stop) ::raise(SIGSTOP);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char held = 0;
    held_ = ::read(ready[0], &held, 1) == 1 && held == 1;
    ::close(ready[0]);
    if (stop) {
      int status = 0;
      stopped_ = ::waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status);
    }
  }
  ~SlotHolder() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  bool held() const { return held_; }
  bool stopped() const { return stopped_; }
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  bool held_ = false;
  bool stopped_ = false;
};

// Two compiling processes stopped with SIGSTOP held both slots: a third
// waited the whole lock timeout for every kernel. A stopped holder compiles
// nothing; the wait ends at once.
TEST_F(BuildSlotsTest, HoldersThatAreStoppedAreNotWaitedFor) {
  const SlotHolder a(folder(), 2, true), b(folder(), 2, true);
  ASSERT_TRUE(a.held() && a.stopped());
  ASSERT_TRUE(b.held() && b.stopped());
  const BuildSlots slots(2, folder());
  EXPECT_EQ(slots.stopped_holders().size(), 2u);
  const auto start = Clock::now();
  std::optional<BuildSlots::Slot> s = slots.take(start + std::chrono::seconds(120));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->held());
  EXPECT_NE(s->why_free().find("stopped"), std::string::npos) << s->why_free();
  EXPECT_NE(s->why_free().find(std::to_string(a.pid())), std::string::npos) << s->why_free();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(60));  // did not wait for the deadline
}

// A holder that is busy is waited for, but a stuck one costs a process at
// most one wait in all: after one wait reached its deadline, later ones do
// not wait for that folder's slots, and still take one that is free.
TEST_F(BuildSlotsTest, AWaitThatReachedItsDeadlineIsNotRepeated) {
  std::optional<SlotHolder> busy;
  busy.emplace(folder(), 1, false);
  ASSERT_TRUE(busy->held());
  const BuildSlots slots(1, folder());
  EXPECT_TRUE(slots.stopped_holders().empty());
  std::optional<BuildSlots::Slot> first = slots.take(Clock::now() + std::chrono::milliseconds(300));
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->held());
  EXPECT_NE(first->why_free().find("whole lock timeout"), std::string::npos) << first->why_free();

  const auto start = Clock::now();
  std::optional<BuildSlots::Slot> second = slots.take(start + std::chrono::seconds(120));
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(second->held());
  EXPECT_NE(second->why_free().find("earlier in this process"), std::string::npos) << second->why_free();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(60));

  busy.reset();  // the holder ends: its slot is free again, and taken
  std::optional<BuildSlots::Slot> third = slots.take(Clock::now() + std::chrono::seconds(120));
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE(third->held());
}

// Another user's (here: a world-writable) folder could hold every slot.
TEST_F(BuildSlotsTest, AFolderOthersCanWriteIsNotUsed) {
  std::filesystem::create_directories(folder());
  ASSERT_EQ(::chmod(folder().c_str(), 0777), 0);
  const BuildSlots slots(1, folder());
  EXPECT_NE(slots.problem().find("world-writable"), std::string::npos) << slots.problem();
  std::optional<BuildSlots::Slot> s = slots.try_take();
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->held());
  EXPECT_TRUE(std::filesystem::is_empty(folder()));
}

TEST_F(BuildSlotsTest, DefaultFolderIsPerUserAndNodeLocal) {
  const char* was = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = was ? was : "";
  ::setenv("XDG_RUNTIME_DIR", temp_folder().c_str(), 1);
  EXPECT_EQ(BuildSlots(1, {}).folder(), temp_folder() / "kiln" / "build-slots");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(BuildSlots(1, {}).folder(),
            std::filesystem::path("/tmp") / ("kiln-" + std::to_string(::geteuid())) / "build-slots");
  if (was) ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace kiln::runtime
