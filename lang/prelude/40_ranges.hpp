// ---- index ranges ------------------------------------------------------------

// A half-open index range [start, end); empty when end <= start.
struct Range {
  index_t start;
  index_t end;
  KILN_FN constexpr bool empty() const { return end <= start; }
};

// r cut to [lo, hi). The result never runs backwards (start <= end), so a loop
// over it is simply skipped when the two do not overlap. Kernels express zones
// (lateral boundary, interior, damping layer) this way: with specialised
// bounds the empty pieces fold to nothing and the others get constant trip
// counts. LLVM does not split a loop at a constant threshold by itself (it
// emits masked code), so the split has to be written out.
KILN_FN constexpr Range clip(Range r, index_t lo, index_t hi) {
  const index_t start = r.start < lo ? lo : r.start;
  const index_t end = r.end < hi ? r.end : hi;
  return {start, end < start ? start : end};
}

struct RangeSplit {
  Range below;     // the part of the range below the split point
  Range at_above;  // the part at or above it
};

// r split at `at`: [start, at) and [at, end), each clipped to r.
KILN_FN constexpr RangeSplit split(Range r, index_t at) {
  const index_t last = r.end < r.start ? r.start : r.end;
  const index_t cut = at < r.start ? r.start : at > last ? last : at;
  return {{r.start, cut}, {cut, last}};
}

