#ifndef KILN_GPU
// ---- extent checks (the CPU entry's; the rules: runtime/call/extents.hpp) -------

// What the entry returns for a call whose arrays or domain the declared
// extents refuse (strides refused return 1 + the argument's index).
inline constexpr int extent_status = -1;

// The extents n that a blocked array's horizontal dimension (nproma, ...,
// nblks) holds: nproma * (nblks - 1) < n <= nproma * nblks. False for blocks
// that hold none (nproma < 1, negative nblks, a product that overflows).
inline bool block_bounds(const kiln_arg& a, int rank, index_t& lo, index_t& hi) {
  const index_t np = a.shape[0], nb = a.shape[rank];
  if (np < 1 || nb < 0 || __builtin_mul_overflow(np, nb, &hi)) return false;
  lo = nb == 0 ? 0 : hi - np + 1;
  return true;
}
inline bool blocks_hold(const kiln_arg& a, int rank, index_t n) {
  index_t lo, hi;
  return block_bounds(a, rank, lo, hi) && lo <= n && n <= hi;
}
// A size no flat array has: each blocked array that has it (plus offset)
// narrows the values it may take to [lo, hi].
inline bool narrow_by_blocks(const kiln_arg& a, int rank, index_t offset, index_t& lo, index_t& hi) {
  index_t held_lo, held_hi;
  if (!block_bounds(a, rank, held_lo, held_hi)) return false;
  lo = held_lo - offset > lo ? held_lo - offset : lo;
  hi = held_hi - offset < hi ? held_hi - offset : hi;
  return true;
}
#endif

#ifdef KILN_CHECK
// A connectivity table in check mode: each entry read is checked against the
// size it indexes, [0, target), and a -1 (a missing neighbour) against what
// its declaration allows (`indexes <size> or -1`).
template <class V>
class CheckedTable : public V {
 public:
  CheckedTable(const kiln_arg& arg, CheckReport* report, int32_t index, index_t target, bool missing)
      : V(arg, report, index), target_(target), missing_(missing) {}
  template <class... I>
  index_t operator()(I... i) const {
    const index_t n = V::operator()(i...);
    if (n < -1 || n >= target_ || (n == -1 && !missing_)) {
      const index_t at[] = {static_cast<index_t>(i)...};
      this->report()->value = n;
      check_failed(this->report(), n == -1 ? 3 : 2, this->arg(), at, static_cast<int>(sizeof...(I)));
    }
    if (n == -1) note_missing(i...);
    return n;
  }

 private:
  template <class... I>
  void note_missing(I... i) const {
    const index_t at[] = {static_cast<index_t>(i)...};
    CheckReport* report = this->report();
    report->missing_table = this->arg() + 1;
    report->missing_rank = sizeof...(I) < 2 ? static_cast<int32_t>(sizeof...(I)) : 2;
    for (int d = 0; d < report->missing_rank; ++d) report->missing_at[d] = at[d];
  }

  index_t target_;
  bool missing_;
};
#endif

