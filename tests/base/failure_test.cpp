// Failure: the kind a caller acts on, from errno, and the message naming the
// path and the call.
#include "base/failure.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/open_file.hpp"
#include "tests/base/temp_folder.hpp"

namespace kiln::base {
namespace {

using Kind = Failure::Kind;

TEST(KindOfErrno, NamesWhatACallerCanActOn) {
  EXPECT_EQ(kind_of_errno(ENOSPC), Kind::no_space);
  EXPECT_EQ(kind_of_errno(EDQUOT), Kind::no_space);
  EXPECT_EQ(kind_of_errno(EROFS), Kind::read_only);
  EXPECT_EQ(kind_of_errno(EACCES), Kind::permission);
  EXPECT_EQ(kind_of_errno(EPERM), Kind::permission);
  EXPECT_EQ(kind_of_errno(ENOENT), Kind::not_found);
  EXPECT_EQ(kind_of_errno(EBUSY), Kind::busy);
  EXPECT_EQ(kind_of_errno(EAGAIN), Kind::busy);
  EXPECT_EQ(kind_of_errno(ENOLCK), Kind::unsupported);
  EXPECT_EQ(kind_of_errno(EOPNOTSUPP), Kind::unsupported);
  EXPECT_EQ(kind_of_errno(EIO), Kind::io);
  EXPECT_EQ(kind_of_errno(ENOTDIR), Kind::io);
  EXPECT_EQ(kind_of_errno(EFBIG), Kind::io);
}

TEST(ErrnoFailure, NamesThePathTheCallAndTheCause) {
  const Failure failure = errno_failure(std::filesystem::path("/a/b"), "rename", EROFS);
  EXPECT_EQ(failure.kind, Kind::read_only);
  EXPECT_EQ(failure.error_number, EROFS);
  EXPECT_EQ(failure.message, std::string("/a/b: rename: ") + std::strerror(EROFS));
  EXPECT_EQ(failure.message, errno_text("/a/b", "rename", EROFS));
}

// A failure of a call that knew no path, given one afterwards, reads as one
// that knew it from the start: kind and errno unchanged.
TEST(ErrnoFailure, AboutAPathPutsItFirst) {
  const Failure bare = errno_failure("write", ENOSPC);
  EXPECT_EQ(bare.message, std::string("write: ") + std::strerror(ENOSPC));
  const Failure named = bare.about("/c/d");
  EXPECT_EQ(named.message, errno_failure(std::filesystem::path("/c/d"), "write", ENOSPC).message);
  EXPECT_EQ(named.kind, Kind::no_space);
  EXPECT_EQ(named.error_number, ENOSPC);
}

TEST(ErrnoFailure, AMissingFileIsNotFound) {
  const OpenFile file("/nonexistent-kiln-base-test/file", O_RDONLY);
  const Failure failure = errno_failure("open", file.open_error());
  EXPECT_EQ(failure.kind, Kind::not_found);
  EXPECT_EQ(failure.error_number, ENOENT);
}

// A real EACCES, from a folder this user may not write. Root passes
// permission bits, so there the open runs in a child that has become the
// unprivileged user `nobody` first.
TEST(ErrnoFailure, AFolderWithoutWritePermissionIsPermission) {
  const testing::TempFolder temp;
  const std::filesystem::path& folder = temp.path();
  ASSERT_EQ(::chmod(folder.c_str(), 0500), 0);
  const auto open_error = [&] { return OpenFile(folder / "file", O_WRONLY | O_CREAT).open_error(); };
  int error = 0;
  if (::geteuid() != 0) {
    error = open_error();
  } else {
    const pid_t child = ::fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
      constexpr uid_t kNobody = 65534;
      if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(255);
      ::_exit(open_error());
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 255) << "cannot become nobody";
    error = WEXITSTATUS(status);
  }
  EXPECT_EQ(error, EACCES);
  EXPECT_EQ(errno_failure("open", error).kind, Kind::permission);
}

TEST(Result, CarriesAValueOrAFailure) {
  const auto half = [](int n) -> Result<int> {
    if (n % 2 != 0) return failed({Kind::invalid, 0, std::to_string(n) + " is odd"});
    return n / 2;
  };
  ASSERT_TRUE(half(4).has_value());
  EXPECT_EQ(*half(4), 2);
  const Result<int> odd = half(3);
  ASSERT_FALSE(odd.has_value());
  EXPECT_EQ(odd.error().kind, Kind::invalid);
  EXPECT_EQ(odd.error().message, "3 is odd");
  // and_then stops at the first failure.
  EXPECT_EQ(half(8).and_then(half).and_then(half).value_or(-1), 1);
  EXPECT_EQ(half(6).and_then(half).and_then(half).error().message, "3 is odd");
}

}  // namespace
}  // namespace kiln::base
