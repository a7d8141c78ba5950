// ---- ICON's blocked layout -------------------------------------------------------
// ICON stores a field over (horizontal, ...) as (nproma, ..., nblks): the
// horizontal index c lies at jc = c % nproma of block jb = c / nproma, the
// blocks last. A kernel is written once over flat indices; the loop helpers
// below walk such a field block by block and hand the body a BlockedIndex,
// which carries c, jc and jb together, so a blocked view addresses its own
// point with no division (a view of a flat array takes it as plain c). An
// index from a connectivity table is flat: a blocked view divides it by
// nproma, a constant when specialised (a multiply and a shift).
struct BlockedIndex {
  index_t flat;  // c
  index_t jc;    // c % nproma
  index_t jb;    // c / nproma
  KILN_FN constexpr operator index_t() const { return flat; }
};

// A view of a blocked array: declared rank Rank, passed with Rank + 1
// dimensions (nproma, ..., nblks). P is nproma (dynamic: read from the
// argument's first extent); S0..S3 are the strides of the first Rank
// dimensions, SB the block stride, each fixed or dynamic; NB the block count,
// fixed or dynamic. One block (NB 1) is a flat array: c is jc, jb is 0.
template <class T, int Rank, index_t P = dynamic, index_t S0 = dynamic, index_t S1 = dynamic, index_t S2 = dynamic,
          index_t S3 = dynamic, index_t SB = dynamic, index_t NB = dynamic>
class BlockedView : public Bounds<Rank> {
 public:
  KILN_FN explicit BlockedView(const kiln_arg& arg) : data_(static_cast<T*>(arg.data)), nproma_(arg.shape[0]) {
    for (int d = 0; d <= Rank; ++d) runtime_strides_[d] = arg.strides[d];
  }
#ifdef KILN_CHECK
  // Bounds as the kernel sees them: the flat horizontal index within the
  // blocks (nproma * nblks), the other indices within their extents.
  BlockedView(const kiln_arg& arg, CheckReport* report, int32_t index) : BlockedView(arg) {
    index_t shape[Rank];
    shape[0] = arg.shape[0] * arg.shape[Rank];
    for (int d = 1; d < Rank; ++d) shape[d] = arg.shape[d];
    this->bind(report, index, shape);
  }
#endif

  KILN_FN static constexpr index_t fixed_stride(int d) {
    return d == Rank ? SB : d == 0 ? S0 : d == 1 ? S1 : d == 2 ? S2 : S3;
  }
  KILN_FN index_t stride(int d) const { return fixed_stride(d) != dynamic ? fixed_stride(d) : runtime_strides_[d]; }
  KILN_FN index_t nproma() const { return P != dynamic ? P : nproma_; }

  // The caller's nproma, strides and blocks agree with the constants this code was compiled for.
  KILN_FN static bool matches(const kiln_arg& arg) {
    if (P != dynamic && arg.shape[0] != P) return false;
    if (NB != dynamic && arg.shape[Rank] != NB) return false;
    for (int d = 0; d <= Rank; ++d)
      if (fixed_stride(d) != dynamic && fixed_stride(d) != arg.strides[d]) return false;
    return true;
  }

  // The point itself: no division. (Templates both, so that a BlockedIndex
  // picks this one by partial ordering, whatever integer types j has.)
  template <class... J>
  KILN_FN T& operator()(BlockedIndex c, J... j) const {
    return at(c, static_cast<index_t>(j)...);
  }
  // A flat index (a neighbour from a table): split into (jc, jb).
  template <class I, class... J>
  KILN_FN T& operator()(I c, J... j) const {
    return at(split(static_cast<index_t>(c)), static_cast<index_t>(j)...);
  }
  // Unsigned: a neighbour index is never negative (-1 is skipped before the
  // read), and an unsigned division by a constant is a multiply and a shift
  // (a mask and a shift for a power of two) with no sign fix-up.
  KILN_FN BlockedIndex split(index_t c) const {
    if constexpr (NB == 1) return {c, c, 0};  // any index of the array lies in its one block
    const uint64_t u = static_cast<uint64_t>(c), p = static_cast<uint64_t>(nproma());
    return {c, static_cast<index_t>(u % p), static_cast<index_t>(u / p)};
  }

 private:
  KILN_FN T& at(BlockedIndex c) const {
    static_assert(Rank == 1);
    KILN_GUARD(c.flat);
    return data_[c.jc * stride(0) + c.jb * stride(1)];
  }
  KILN_FN T& at(BlockedIndex c, index_t j) const {
    static_assert(Rank == 2);
    KILN_GUARD(c.flat, j);
    return data_[c.jc * stride(0) + j * stride(1) + c.jb * stride(2)];
  }
  KILN_FN T& at(BlockedIndex c, index_t j, index_t k) const {
    static_assert(Rank == 3);
    KILN_GUARD(c.flat, j, k);
    return data_[c.jc * stride(0) + j * stride(1) + k * stride(2) + c.jb * stride(3)];
  }

  T* data_;
  index_t nproma_;
  index_t runtime_strides_[Rank + 1];
};

template <class V>
inline constexpr bool is_blocked = false;
template <class T, int R, index_t P, index_t S0, index_t S1, index_t S2, index_t S3, index_t SB, index_t NB>
inline constexpr bool is_blocked<BlockedView<T, R, P, S0, S1, S2, S3, SB, NB>> = true;

// The index a loop hands its body for flat point c: c itself, or, when the
// loop follows a blocked view, c with its place in the blocks.
template <class V>
KILN_FN index_t point_index(const V&, index_t c) {
  return c;
}
template <class T, int R, index_t P, index_t S0, index_t S1, index_t S2, index_t S3, index_t SB, index_t NB>
KILN_FN BlockedIndex point_index(const BlockedView<T, R, P, S0, S1, S2, S3, SB, NB>& v, index_t c) {
  return v.split(c);
}

