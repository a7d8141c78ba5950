#include "runtime/metrics/process_clock.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace kiln::runtime {
namespace {

// Field 22 of /proc/self/stat: the start, in clock ticks after boot. Field 2
// (the command name, in parentheses) may hold spaces and parentheses, so the
// count starts after its last ')'.
std::optional<unsigned long long> start_ticks() {
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  const char* at = std::strrchr(buffer, ')');
  if (!at) return std::nullopt;
  // After ')' come " 3 4 ...": the space before field n is the (n - 2)th.
  for (int field = 3; field <= 22; ++field) {
    at = std::strchr(at + 1, ' ');
    if (!at) return std::nullopt;
  }
  char* end = nullptr;
  const unsigned long long ticks = std::strtoull(at + 1, &end, 10);
  if (end == at + 1) return std::nullopt;
  return ticks;
}

ProcessStart find_start() {
  const auto now = std::chrono::steady_clock::now();
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  timespec boot{};
  const std::optional<unsigned long long> ticks = start_ticks();
  // The start is on CLOCK_BOOTTIME; steady_clock is CLOCK_MONOTONIC, which
  // differs from it only by time suspended, and none passes between the two reads.
  if (!ticks || ticks_per_second <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return {now, 0.0, false};
  const double boot_ms = static_cast<double>(boot.tv_sec) * 1e3 + static_cast<double>(boot.tv_nsec) / 1e6;
  const double start_ms = static_cast<double>(*ticks) * 1e3 / static_cast<double>(ticks_per_second);
  const auto age = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(boot_ms - start_ms));
  return {now - age, 1e3 / static_cast<double>(ticks_per_second), true};
}

}  // namespace

const ProcessStart& process_start() {
  static const ProcessStart start = find_start();
  return start;
}

double ms_since_process_start(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - process_start().at).count();
}

}  // namespace kiln::runtime
