// ---- neighbour reductions ----------------------------------------------------
// `table` is a connectivity view [n_entities][N] of int32 (C2E, E2C2V, ...);
// N is a template constant so the reduction unrolls fully. Terms are added in
// neighbour order from 0.0, the order the references and ICON use.

// Sum over j < N of coeff(row, j) * field(table(row, j), k). Every entry must
// be a valid index: use this where the domain never meets a missing neighbour.
template <int N, class Table, class Coeff, class Field, class Row>
KILN_FN double neighbour_sum(const Table& table, const Coeff& coeff, const Field& field, Row row, index_t k) {
  double sum = 0.0;
  for (int j = 0; j < N; ++j) sum += coeff(row, j) * field(table(row, j), k);
  return sum;
}

// field(n, k), or 0.0 where n is -1 (a missing neighbour), read without a
// condition: a missing neighbour reads row 0 in its place and the value is
// dropped. A conditional read cannot be vectorised as a plain load: in C order
// (n the same for the whole vertical loop) LLVM made it one branch, scalar
// load and blend per lane and neighbour; this is one vector load and a select
// whose mask is computed once per column. Row 0 exists: the extents refuse a
// call whose table has rows but indexes an empty size.
template <class Field>
KILN_FN double present_or_zero(const Field& field, index_t n, index_t k) {
  const double value = field(n >= 0 ? n : 0, k);
  return n >= 0 ? value : 0.0;
}

// The same, skipping entries that are -1: the neighbours a limited-area grid
// lacks at its boundary (and a pentagon's sixth edge in ICON's V2E). Every
// row has its N coefficients, and reading them unconditionally lets a vector
// loop load them whole instead of gathering them under a mask (RBF ran 1.25x
// to 1.4x the Fortran before). The sum still skips the term, so the result is
// what skipping gives.
template <int N, class Table, class Coeff, class Field, class Row>
KILN_FN double neighbour_sum_skip_missing(const Table& table, const Coeff& coeff, const Field& field, Row row,
                                         index_t k) {
  double sum = 0.0;
  for (int j = 0; j < N; ++j) {
    const index_t n = table(row, j);
    const double c = coeff(row, j);
    const double value = present_or_zero(field, n, k);
    sum = n >= 0 ? sum + c * value : sum;  // one expression: contracted to a fused multiply-add, as before
  }
  return sum;
}

// Two sums over the same neighbours' values, each value read once: RBF's u
// and v, the w diffusion's two gradients. Written as two calls of the above
// they read every neighbour twice: a store between them (the first output)
// may alias the field, so the compiler cannot share the reads.
struct SumPair {
  double first;
  double second;
};
template <int N, class Table, class CoeffA, class CoeffB, class Field, class Row>
KILN_FN SumPair neighbour_sums(const Table& table, const CoeffA& a, const CoeffB& b, const Field& field, Row row,
                               index_t k) {
  SumPair sums{0.0, 0.0};
  for (int j = 0; j < N; ++j) {
    const double value = field(table(row, j), k);
    sums.first += a(row, j) * value;
    sums.second += b(row, j) * value;
  }
  return sums;
}
template <int N, class Table, class CoeffA, class CoeffB, class Field, class Row>
KILN_FN SumPair neighbour_sums_skip_missing(const Table& table, const CoeffA& a, const CoeffB& b, const Field& field,
                                            Row row, index_t k) {
  SumPair sums{0.0, 0.0};
  for (int j = 0; j < N; ++j) {  // coefficients read whole, as in neighbour_sum_skip_missing
    const index_t n = table(row, j);
    const double ca = a(row, j), cb = b(row, j);
    const double value = present_or_zero(field, n, k);
    sums.first = n >= 0 ? sums.first + ca * value : sums.first;
    sums.second = n >= 0 ? sums.second + cb * value : sums.second;
  }
  return sums;
}

// The smallest range holding every present entry table(row, j), row in `rows`,
// j < N: where a temporary on the neighbours of `rows` has to be computed.
// Empty when `rows` is.
template <int N, class Table>
KILN_FN Range neighbour_hull(const Table& table, Range rows) {
  index_t lo = 0x7fffffffffffffffLL, hi = 0;
  for (index_t row = rows.start; row < rows.end; ++row)
    for (int j = 0; j < N; ++j) {
      const index_t n = table(row, j);
      if (n < 0) continue;
      lo = n < lo ? n : lo;
      hi = n + 1 > hi ? n + 1 : hi;
    }
  return lo < hi ? Range{lo, hi} : Range{0, 0};
}

