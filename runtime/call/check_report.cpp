#include "runtime/call/check_report.hpp"

#include <string>

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

std::string tuple(const std::int64_t* values, int count) {
  std::string out = "(";
  for (int i = 0; i < count; ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + ")";
}

const std::string& name_of(const lang::KernelInfo& kernel, std::size_t index) {
  return index < kernel.args.size() ? kernel.args[index].name : kernel.temporaries[index - kernel.args.size()].name;
}

// Where the -1 came from: the last -1 the kernel read from a table that may
// hold it (the read just before the access, in the prelude's reductions).
std::string missing_source(const lang::KernelInfo& kernel, const CheckReport& report) {
  const std::size_t table = static_cast<std::size_t>(report.missing_table) - 1;
  if (report.missing_table < 1 || table >= kernel.args.size() || report.missing_rank < 1 || report.missing_rank > 2)
    return "";
  return "; the last -1 it read: table '" + kernel.args[table].name + "', row " +
         std::to_string(report.missing_at[0]) +
         (report.missing_rank > 1 ? ", column " + std::to_string(report.missing_at[1]) : "");
}

}  // namespace

void check_failed(const lang::KernelInfo& kernel, const kiln_arg* const* passed, std::size_t count,
                  const CheckReport& report) {
  const std::size_t index = static_cast<std::size_t>(report.arg);
  if (report.arg < 0 || index >= count || report.rank < 1 || report.rank > 4)
    throw Error("kiln: kernel '" + kernel.name + "' stopped in check mode with a report kiln cannot read");
  const std::string array = name_of(kernel, index);
  const kiln_arg& arg = *passed[index];
  std::string what = "kiln: kernel '" + kernel.name + "', check mode: ";
  if (report.kind == kIndexOutside) {
    // The extents as the view saw them: a blocked array's horizontal one is nproma * nblks.
    const bool blocked = arg.rank == report.rank + 1;
    std::int64_t extents[4] = {};
    for (int d = 0; d < report.rank; ++d) extents[d] = arg.shape[d];
    if (blocked) extents[0] = arg.shape[0] * arg.shape[arg.rank - 1];
    what += "array '" + array + "' read at " + tuple(report.index, report.rank) + ", outside its extents " +
            tuple(extents, report.rank);
    for (int d = 0; d < report.rank; ++d)
      if (report.index[d] == -1) {
        what += " (index -1: a missing neighbour read as if present" + missing_source(kernel, report) + ")";
        break;
      }
  } else {
    const lang::ArgDecl& table = kernel.args[index];
    const std::string size = table.indexes ? kernel.sizes[*table.indexes].name : "?";
    what += "table '" + array + "' at " + tuple(report.index, report.rank) + " holds " + std::to_string(report.value);
    what += report.kind == kMissingNotAllowed
                ? ": a missing neighbour (-1), which '" + array + "' may not hold (declared 'indexes " + size + "')"
                : ", outside " + size + " (the size it indexes)";
  }
  if (report.has_point) what += ", at point " + tuple(report.point, 2);
  throw ArgumentError(what + "; the kernel stopped before that access");
}

}  // namespace kiln::runtime
