// The read and write loops: whole transfers through short reads and writes,
// and through EINTR, which a signal handler installed without SA_RESTART
// makes a blocked call return. The EINTR tests block a thread in read(2) or
// write(2) on a pipe, wait until the kernel shows it asleep there, and signal
// it: a loop that gave up on EINTR fails them.
#include "base/posix_io.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/open_file.hpp"
#include "tests/base/temp_folder.hpp"

namespace kiln::base {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::atomic<int> signals_handled{0};

void count_signal(int) { signals_handled.fetch_add(1); }

// SIGUSR1 handled without SA_RESTART for the test's life, so that a blocked
// read or write returns EINTR rather than being restarted by the kernel.
class InterruptingSignal {
 public:
  InterruptingSignal() {
    struct sigaction action {};
    action.sa_handler = count_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART
    ::sigaction(SIGUSR1, &action, &old_);
  }
  ~InterruptingSignal() { ::sigaction(SIGUSR1, &old_, nullptr); }
  InterruptingSignal(const InterruptingSignal&) = delete;
  InterruptingSignal& operator=(const InterruptingSignal&) = delete;

 private:
  struct sigaction old_ {};
};

// The scheduler state of one of this process's threads ('S': asleep, as in
// a blocking read), from /proc.
char thread_state(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

// Waits (at most 10 s) until the thread sleeps, then signals it and waits
// until the handler ran. False when it never slept or was never handled.
bool interrupt_when_blocked(std::thread& thread, const std::atomic<pid_t>& tid) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (tid.load() == 0 || thread_state(tid.load()) != 'S') {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  const int before = signals_handled.load();
  if (::pthread_kill(thread.native_handle(), SIGUSR1) != 0) return false;
  while (signals_handled.load() == before) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

struct Pipe {
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read_end = fds[0];
      write_end = fds[1];
    }
  }
  ~Pipe() {
    close_write();
    if (read_end >= 0) ::close(read_end);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_write() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
  int read_end = -1, write_end = -1;
};

std::vector<char> pattern(std::size_t size) {
  std::vector<char> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  return bytes;
}

TEST(ReadToEnd, ReadsThroughEintrAndShortReads) {
  const InterruptingSignal signal;
  Pipe pipe;
  ASSERT_GE(pipe.read_end, 0);
  std::atomic<pid_t> reader_tid{0};
  std::vector<char> got;
  std::optional<Result<void>> result;
  std::thread reader([&] {
    reader_tid = ::gettid();
    result = read_to_end(pipe.read_end, 4, got);  // a small hint: the buffer must grow
  });
  // Twice: the loop must go back to read(2) after the first EINTR, not only once.
  ASSERT_TRUE(interrupt_when_blocked(reader, reader_tid));
  ASSERT_TRUE(interrupt_when_blocked(reader, reader_tid));
  // Two writes, the reader asleep in between: at least two short reads.
  const std::vector<char> bytes = pattern(10000);
  ASSERT_EQ(::write(pipe.write_end, bytes.data(), 3000), 3000);
  ASSERT_TRUE(interrupt_when_blocked(reader, reader_tid));
  ASSERT_EQ(::write(pipe.write_end, bytes.data() + 3000, 7000), 7000);
  pipe.close_write();
  reader.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->has_value()) << result->error().message;
  EXPECT_EQ(got, bytes);
}

TEST(WriteAll, WritesThroughEintrAndShortWrites) {
  const InterruptingSignal signal;
  Pipe pipe;
  ASSERT_GE(pipe.read_end, 0);
  // The pipe full before the writer starts: its first write(2) blocks having
  // written nothing, so the first signal makes it fail with EINTR. Later ones
  // find it blocked part way through a write, which then returns short.
  ASSERT_EQ(::fcntl(pipe.write_end, F_SETFL, O_NONBLOCK), 0);
  std::size_t filled = 0;
  for (const char fill = 'f'; ::write(pipe.write_end, &fill, 1) == 1;) ++filled;
  ASSERT_EQ(errno, EAGAIN);
  ASSERT_EQ(::fcntl(pipe.write_end, F_SETFL, 0), 0);
  const std::vector<char> bytes = pattern(1 << 20);  // far more than a pipe holds (64 KiB)
  std::atomic<pid_t> writer_tid{0};
  std::optional<Result<void>> result;
  std::thread writer([&] {
    writer_tid = ::gettid();
    result = write_all(pipe.write_end, bytes);
    pipe.close_write();
  });
  ASSERT_TRUE(interrupt_when_blocked(writer, writer_tid));
  std::vector<char> fill(filled);
  ASSERT_EQ(::read(pipe.read_end, fill.data(), fill.size()), static_cast<ssize_t>(filled));
  EXPECT_EQ(fill, std::vector<char>(filled, 'f'));
  std::vector<char> got;
  std::vector<char> chunk(48 * 1024);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(interrupt_when_blocked(writer, writer_tid)) << round;
    const ssize_t n = ::read(pipe.read_end, chunk.data(), chunk.size());  // room for the writer to go on
    ASSERT_GT(n, 0);
    got.insert(got.end(), chunk.begin(), chunk.begin() + n);
  }
  for (;;) {
    const ssize_t n = ::read(pipe.read_end, chunk.data(), chunk.size());
    ASSERT_GE(n, 0) << std::strerror(errno);
    if (n == 0) break;
    got.insert(got.end(), chunk.begin(), chunk.begin() + n);
  }
  writer.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(result->has_value()) << result->error().message;
  EXPECT_EQ(got.size(), bytes.size());
  EXPECT_TRUE(got == bytes) << "bytes lost, repeated or out of order";
}

TEST(WriteAll, AFullDeviceIsNoSpace) {
  const OpenFile full("/dev/full", O_WRONLY);
  if (full.fd() < 0) GTEST_SKIP() << "no /dev/full here";
  const Result<void> written = write_all(full.fd(), pattern(100));
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().kind, Failure::Kind::no_space);
  EXPECT_EQ(written.error().error_number, ENOSPC);
  EXPECT_EQ(written.error().message, std::string("write: ") + std::strerror(ENOSPC));
}

class FileIoTest : public ::testing::Test {
 protected:
  fs::path file_of(const std::vector<char>& bytes) const {
    const fs::path path = temp.path() / "file";
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  testing::TempFolder temp;
};

// The hint is fstat's size, which may be stale: a longer file is read whole,
// a shorter one ends where it ends.
TEST_F(FileIoTest, ReadToEndIsNotBoundByTheHint) {
  const std::vector<char> bytes = pattern(100000);
  const fs::path path = file_of(bytes);
  for (const std::size_t hint : {std::size_t{0}, std::size_t{99999}, std::size_t{100000}, std::size_t{300000}}) {
    const OpenFile file(path, O_RDONLY);
    std::vector<char> got(7, 'x');  // replaced, not appended to
    ASSERT_TRUE(read_to_end(file.fd(), hint, got).has_value()) << hint;
    EXPECT_TRUE(got == bytes) << hint;
  }
}

TEST_F(FileIoTest, ReadAtReadsFromTheOffsetAndFewerOnlyAtTheEnd) {
  const std::vector<char> bytes = pattern(5000);
  const OpenFile file(file_of(bytes), O_RDONLY);
  std::vector<char> out(1000);
  Result<std::size_t> read = read_at(file.fd(), 4500, out);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(*read, 500U);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 500, bytes.begin() + 4500));
  read = read_at(file.fd(), 100, out);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, 1000U);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 100));
  EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 0) << "pread moves no position";
  EXPECT_EQ(read_at(file.fd(), 9000, out).value_or(99), 0U);
}

TEST(ReadAt, APipeCannotBeReadAtAnOffset) {
  Pipe pipe;
  ASSERT_GE(pipe.read_end, 0);
  std::vector<char> out(10);
  const Result<std::size_t> read = read_at(pipe.read_end, 0, out);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().error_number, ESPIPE);
  EXPECT_EQ(read.error().kind, Failure::Kind::io);
  EXPECT_EQ(read.error().message, std::string("pread: ") + std::strerror(ESPIPE));
}

TEST(WriteOnce, WritesOnceAndSaysHowMuch) {
  Pipe pipe;
  ASSERT_GE(pipe.read_end, 0);
  const std::vector<char> bytes = pattern(100);
  const Result<std::size_t> written = write_once(pipe.write_end, bytes);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(*written, 100U);
  std::vector<char> got(100);
  ASSERT_EQ(::read(pipe.read_end, got.data(), got.size()), 100);
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(write_once(-1, bytes).error().error_number, EBADF);
}

}  // namespace
}  // namespace kiln::base
