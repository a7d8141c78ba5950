
// ---- temporaries -----------------------------------------------------------------
// A temporary (`#pragma kiln temporary ... like <array>`) is kiln's memory,
// laid out as its array: its view is that array's view V, plus the count of
// horizontal indices it holds (a blocked one: nproma * nblks). A helper that
// walks a temporary (`kiln::for_each_point(z, range, ...)`) walks only the
// part of its range the temporary holds, so a range computed from a table
// (neighbour_hull over an entry at or past the size it indexes: issue 33's
// z_nabla2_c) never writes past kiln's buffer, whatever the table holds. A
// range inside the temporary, every one of a good table, is walked unchanged.
template <class V>
class Temporary : public V {
 public:
  KILN_FN explicit Temporary(const kiln_arg& arg) : V(arg), rows_(rows_of(arg)) {}
  // `size`: its array's declared horizontal size, which a blocked array's
  // blocks may exceed (the last block's padding): the rows it holds.
  KILN_FN Temporary(const kiln_arg& arg, index_t size) : V(arg), rows_(least(rows_of(arg), size)) {}
#ifdef KILN_CHECK
  Temporary(const kiln_arg& arg, CheckReport* report, int32_t index) : V(arg, report, index), rows_(rows_of(arg)) {}
  Temporary(const kiln_arg& arg, CheckReport* report, int32_t index, index_t size)
      : V(arg, report, index), rows_(least(rows_of(arg), size)) {}
#endif
  // The horizontal indices it holds: [0, rows()).
  KILN_FN index_t rows() const { return rows_; }

 private:
  KILN_FN static index_t least(index_t a, index_t b) { return a < b ? a : b; }
  KILN_FN static index_t rows_of(const kiln_arg& arg) {
    if constexpr (is_blocked<V>) return arg.shape[0] * arg.shape[arg.rank - 1];
    else return arg.shape[0];
  }
  index_t rows_;
};

template <class V>
inline constexpr bool is_blocked<Temporary<V>> = is_blocked<V>;
template <class V>
inline constexpr bool is_temporary = false;
template <class V>
inline constexpr bool is_temporary<Temporary<V>> = true;

template <class V>
KILN_FN auto point_index(const Temporary<V>& t, index_t c) {
  return point_index(static_cast<const V&>(t), c);
}

// The part of [start, end) a helper following `layout` walks: all of it,
// or, for a temporary, what lies in [0, rows()).
template <class V>
KILN_FN void walked([[maybe_unused]] const V& layout, index_t& start, index_t& end) {
  if constexpr (is_temporary<V>) {
    start = start < 0 ? 0 : start;
    end = end > layout.rows() ? layout.rows() : end;
    end = end < start ? start : end;
  }
}
