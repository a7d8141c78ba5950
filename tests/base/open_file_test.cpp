// OpenFile: one owner of a descriptor, closed exactly once, handed on by move.
#include "base/open_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "tests/base/temp_folder.hpp"

namespace kiln::base {
namespace {

namespace fs = std::filesystem;

// True while `fd` names an open descriptor of this process.
bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

class OpenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(folder / "a") << "a";
    std::ofstream(folder / "b") << "b";
  }
  testing::TempFolder temp;
  const fs::path& folder = temp.path();
};

TEST_F(OpenFileTest, OpensCloseOnExecAndClosesAtTheEnd) {
  int fd = -1;
  {
    const OpenFile file(folder / "a", O_RDONLY);
    fd = file.fd();
    ASSERT_GE(fd, 0);
    EXPECT_EQ(file.open_error(), 0);
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "a child process must not inherit it";
  }
  EXPECT_FALSE(is_open(fd));
}

TEST_F(OpenFileTest, AFailedOpenHoldsNothingAndSaysWhy) {
  const OpenFile file(folder / "missing", O_RDONLY);
  EXPECT_EQ(file.fd(), -1);
  EXPECT_EQ(file.open_error(), ENOENT);
  const OpenFile none;
  EXPECT_EQ(none.fd(), -1);
  EXPECT_EQ(none.open_error(), EBADF);
}

TEST_F(OpenFileTest, AMoveHandsTheDescriptorOnAndLeavesNone) {
  OpenFile first(folder / "a", O_RDONLY);
  const int fd = first.fd();
  ASSERT_GE(fd, 0);
  {
    const OpenFile second(std::move(first));
    EXPECT_EQ(second.fd(), fd);
    EXPECT_EQ(second.open_error(), 0);
    EXPECT_EQ(first.fd(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    EXPECT_EQ(first.open_error(), EBADF);
    EXPECT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd)) << "closed by its new owner";
}

// The descriptor it held is closed; the one moved in stays open, once.
TEST_F(OpenFileTest, MoveAssignmentClosesWhatItHeld) {
  OpenFile a(folder / "a", O_RDONLY);
  OpenFile b(folder / "b", O_RDONLY);
  const int fd_a = a.fd(), fd_b = b.fd();
  ASSERT_GE(fd_a, 0);
  ASSERT_GE(fd_b, 0);
  a = std::move(b);
  EXPECT_FALSE(is_open(fd_a));
  EXPECT_EQ(a.fd(), fd_b);
  EXPECT_TRUE(is_open(fd_b));
  EXPECT_EQ(b.fd(), -1);  // NOLINT(bugprone-use-after-move)
  char byte = 0;
  ASSERT_EQ(::pread(a.fd(), &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'b');
  OpenFile& same = a;
  a = std::move(same);  // a self-move must not close it
  EXPECT_TRUE(is_open(fd_b));
  EXPECT_EQ(a.fd(), fd_b);
}

}  // namespace
}  // namespace kiln::base
