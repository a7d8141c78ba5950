// ICON's blocked connectivity, made kiln's. ICON keeps a neighbour table as
// two arrays, the neighbour's index within its block and its block, both
// 1-based: idx(nproma, nblks, n) and blk(nproma, nblks, n). kiln's kernels
// read a flat 0-based table [n_entities][n] (E2C2V(e, j)), blocked fields or
// not (Spec::blocked). Converting once, when the grid is read, was measured
// against kernels reading idx and blk themselves: see docs/blocked_layout.md.
#pragma once

#include "kiln/arg.hpp"
#include "kiln/export.hpp"

namespace kiln {

// Fills `table` (int32, [n_entities][n], any strides) from `idx` and `blk`
// (int32, (nproma, nblks, n), any strides; nproma is idx's first extent):
// table(e, j) = (blk - 1) * nproma + idx - 1 for entity e = (jb - 1) * nproma
// + jc - 1, and -1 where both idx and blk are 0 or less (a neighbour a
// limited-area grid lacks). Entities past n_entities in the last block are
// ICON's padding and not read. Throws ArgumentError, writing nothing, on
// arrays of the wrong type, rank or extents, on an idx outside 1..nproma, on
// an entry with only one of idx and blk missing, or on a result past int32.
KILN_API void flat_table(const kiln_arg& idx, const kiln_arg& blk, const kiln_arg& table);

}  // namespace kiln
