// read(2), pread(2) and write(2) through short transfers and EINTR: a signal
// handler installed without SA_RESTART (by the application, an MPI library, a
// profiler) makes a blocked call return EINTR, which is not a failure. A
// failure names the call ("write: No space left on device"); a caller that
// knows the path adds it with Failure::about().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/failure.hpp"

namespace kiln::base {

// Reads from the descriptor's position to end of file into `out` (replacing
// it); `size_hint` (fstat's size, say) sizes the buffer, which grows if the
// file is longer.
[[nodiscard]] Result<void> read_to_end(int fd, std::size_t size_hint, std::vector<char>& out);

// Fills `out` from `offset` (the descriptor's position is not used or moved):
// how many bytes were read, fewer than out.size() only at end of file.
[[nodiscard]] Result<std::size_t> read_at(int fd, std::uint64_t offset, std::span<char> out);

// Writes all of `bytes`.
[[nodiscard]] Result<void> write_all(int fd, std::span<const char> bytes);

// One write(2), retried only on EINTR: how many bytes it wrote, which may be
// fewer than bytes.size(). For O_APPEND writers whose records must not be
// split between two writes (another appender's could land between them).
[[nodiscard]] Result<std::size_t> write_once(int fd, std::span<const char> bytes);

}  // namespace kiln::base
