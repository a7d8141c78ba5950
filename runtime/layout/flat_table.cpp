// kiln::flat_table: ICON's index/block neighbour arrays to kiln's flat table.
// Everything is checked before the first write, so a broken table leaves the
// output as it was.
#include <cstdint>
#include <limits>
#include <string>

#include "kiln/blocks.hpp"
#include "kiln/errors.hpp"

namespace kiln {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ArgumentError("kiln::flat_table: " + what); }

std::int32_t& at(const kiln_arg& a, std::int64_t i, std::int64_t j, std::int64_t k = 0) {
  return static_cast<std::int32_t*>(a.data)[i * a.strides[0] + j * a.strides[1] + k * (a.rank > 2 ? a.strides[2] : 0)];
}

void require_int32_array(const kiln_arg& a, const char* name, int rank) {
  if (a.type != static_cast<std::int32_t>(ElementType::i32) || a.rank != rank || (a.data == nullptr && rank > 0))
    fail(std::string(name) + " must be an int32 array of rank " + std::to_string(rank) + ", got " +
         std::string(type_name(static_cast<ElementType>(a.type))) + " of rank " + std::to_string(a.rank));
  for (int d = 0; d < rank; ++d)
    if (a.shape[d] < 0) fail(std::string(name) + " has a negative extent");
}

// 1-based Fortran position of entry (jc, jb, j), as the user's arrays number it.
std::string position(std::int64_t jc, std::int64_t jb, std::int64_t j) {
  // Appended, not concatenated: GCC 12 warns falsely (-Wrestrict) on "(" + to_string(...).
  std::string out = "(";
  out.append(std::to_string(jc + 1)).append(", ").append(std::to_string(jb + 1));
  return out.append(", ").append(std::to_string(j + 1)).append(")");
}

// The flat index entry (jc, jb, j) stands for; -1 when missing.
std::int64_t flat_entry(const kiln_arg& idx, const kiln_arg& blk, std::int64_t jc, std::int64_t jb, std::int64_t j) {
  const std::int64_t nproma = idx.shape[0];
  const std::int64_t i = at(idx, jc, jb, j), b = at(blk, jc, jb, j);
  if (i <= 0 && b <= 0) return -1;
  if (i <= 0 || b <= 0)
    fail("idx" + position(jc, jb, j) + " = " + std::to_string(i) + " with blk" + position(jc, jb, j) + " = " +
         std::to_string(b) + ": a missing neighbour has both 0");
  if (i > nproma)
    fail("idx" + position(jc, jb, j) + " = " + std::to_string(i) + " lies outside 1.." + std::to_string(nproma) +
         " (nproma)");
  const std::int64_t flat = (b - 1) * nproma + i - 1;
  if (flat > std::numeric_limits<std::int32_t>::max())
    fail("entry" + position(jc, jb, j) + " names neighbour " + std::to_string(flat) + ", past int32");
  return flat;
}

}  // namespace

void flat_table(const kiln_arg& idx, const kiln_arg& blk, const kiln_arg& table) {
  require_int32_array(idx, "idx", 3);
  require_int32_array(blk, "blk", 3);
  require_int32_array(table, "table", 2);
  for (int d = 0; d < 3; ++d)
    if (idx.shape[d] != blk.shape[d]) fail("idx and blk differ in extent " + std::to_string(d + 1));
  const std::int64_t nproma = idx.shape[0], nblks = idx.shape[1], n = idx.shape[2];
  const std::int64_t entities = table.shape[0];
  if (table.shape[1] != n)
    fail("table has " + std::to_string(table.shape[1]) + " neighbours per entity, idx " + std::to_string(n));
  if (entities > nproma * nblks)
    fail("table has " + std::to_string(entities) + " entities, more than the " + std::to_string(nproma * nblks) +
         " of idx's " + std::to_string(nblks) + " blocks of " + std::to_string(nproma));
  for (std::int64_t e = 0; e < entities; ++e)  // check all first: a failure writes nothing
    for (std::int64_t j = 0; j < n; ++j) (void)flat_entry(idx, blk, e % nproma, e / nproma, j);
  for (std::int64_t e = 0; e < entities; ++e)
    for (std::int64_t j = 0; j < n; ++j)
      at(table, e, j) = static_cast<std::int32_t>(flat_entry(idx, blk, e % nproma, e / nproma, j));
}

}  // namespace kiln
