// Check mode's report (Config::check, KILN_CHECK): what a kernel compiled with
// bounds-checked views writes at its first violation before it stops (the
// prelude's kiln::CheckReport, same layout), and the error that names it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/arg.hpp"
#include "lang/parser.hpp"

namespace kiln::runtime {

struct CheckReport {
  void* jump[5];            // the entry's __builtin_setjmp buffer
  std::int64_t index[4];    // the index out of bounds, or a table's row and column
  std::int64_t point[2];    // the loop point being computed (has_point)
  std::int64_t value;       // a table's entry out of its range
  std::int32_t arg;         // argument index; kernel.args.size() + t: temporary t
  std::int32_t rank;        // how many values index holds
  std::int32_t kind;        // kIndexOutside, kEntryOutside or kMissingNotAllowed
  std::int32_t has_point;
  std::int64_t missing_at[2];   // the last -1 read from a table that may hold it: its row and column
  std::int32_t missing_table;   // 1 + that table's argument index; 0: none read
  std::int32_t missing_rank;    // how many values missing_at holds
};
static_assert(sizeof(CheckReport) == 40 + 32 + 16 + 8 + 16 + 16 + 8);

inline constexpr std::int32_t kIndexOutside = 1;
inline constexpr std::int32_t kEntryOutside = 2;
inline constexpr std::int32_t kMissingNotAllowed = 3;
// What the entry returns when it stopped at a violation (kiln::check_status).
inline constexpr int kCheckStatus = -2;

// The ArgumentError for what `report` holds: the kernel, the array (or
// temporary), the index and the extents it missed, or the table's entry and
// the size it indexes, and the point. `passed`: the arguments, then the temporaries.
[[noreturn]] void check_failed(const lang::KernelInfo& kernel, const kiln_arg* const* passed, std::size_t count,
                               const CheckReport& report);

}  // namespace kiln::runtime
