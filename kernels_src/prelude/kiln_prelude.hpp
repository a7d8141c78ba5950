// kiln's kernel prelude: the only thing a kernel source sees. No host headers:
// <cmath> alone costs ~150 ms of parsing per compile, and the same prelude must
// later serve NVRTC and hipRTC, which have none. Math goes through compiler
// builtins; loops over the domain go through the iteration helpers below, so
// that one kernel text becomes vectorised loops here and a thread mapping on GPUs.
//
// The runtime pastes this text in front of every generated translation unit;
// its bytes are part of every cache key.
//
// One text for three compilers: clang for the CPU, NVRTC (CUDA; an EDG front
// end without GCC's builtins) and hipRTC (clang). KILN_GPU marks the device
// side; KILN_FN makes a helper callable where the kernel runs.

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KILN_GPU 1
#define KILN_FN __device__ __forceinline__
#else
#define KILN_FN inline
#endif

#if defined(__HIPCC__)
// hipRTC's own headers, included before every source, define them already
// (int64_t as long long, where clang's __INT64_TYPE__ is long).
#elif defined(__CUDACC__) && !defined(__clang__)  // NVRTC: no __INT64_TYPE__ and friends
using int8_t = signed char;
using int32_t = int;
using int64_t = long long;
using uint32_t = unsigned int;
using uint64_t = unsigned long long;
#else
using int8_t = __INT8_TYPE__;
using int32_t = __INT32_TYPE__;
using int64_t = __INT64_TYPE__;
using uint32_t = __UINT32_TYPE__;
using uint64_t = __UINT64_TYPE__;
#endif

// Must match kiln_arg / kiln_value in api/include/kiln/arg.hpp (checked there
// and here by size and offsets).
struct kiln_arg {
  void* data;
  int64_t shape[4];
  int64_t strides[4];
  union {
    double f64;
    int64_t i64;
  } scalar;
  int32_t type;
  int32_t rank;
};
union kiln_value {
  double f64;
  int64_t i64;
};
struct kiln_context {
  int32_t thread;
  int32_t threads;
  void (*barrier)(void* state);
  void* state;
};
static_assert(sizeof(kiln_arg) == 88 && sizeof(kiln_value) == 8 && sizeof(kiln_context) == 24);
#if !defined(__CUDACC__) || defined(__clang__)  // NVRTC lacks __builtin_offsetof
static_assert(__builtin_offsetof(kiln_arg, strides) == 40 && __builtin_offsetof(kiln_arg, scalar) == 72 &&
              __builtin_offsetof(kiln_arg, type) == 80);
#endif

namespace kiln {

using index_t = int64_t;

// A stride that is not a compile-time constant.
inline constexpr index_t dynamic = -1;

#ifdef KILN_CHECK
// ---- check mode (KILN_CHECK; the CPU only) -----------------------------------
// Every view access is bounds-checked and every table read range-checked. The
// first violation writes what it was here and jumps back to the entry, which
// returns check_status: the access itself never happens. Must match
// runtime/call/check_report.hpp.
struct CheckReport {
  void* jump[5];      // __builtin_setjmp's buffer, set by the entry
  index_t index[4];   // the index that was out of bounds (rank of them), or the table's row and column
  index_t point[2];   // the loop point being computed (has_point)
  index_t value;      // a table's entry that was out of its range
  int32_t arg;        // the argument (kernel.args.size() + t: temporary t)
  int32_t rank;       // how many values index holds
  int32_t kind;       // 1: an index outside the array; 2: a table entry outside its size; 3: a -1 the table may not hold
  int32_t has_point;
};
inline constexpr int check_status = -2;

[[noreturn]] __attribute__((noinline, cold)) inline void check_failed(CheckReport* report, int32_t kind, int32_t arg,
                                                                      const index_t* index, int rank) {
  report->kind = kind;
  report->arg = arg;
  report->rank = rank;
  for (int d = 0; d < rank; ++d) report->index[d] = index[d];
  __builtin_longjmp(report->jump, 1);
}
#define KILN_GUARD(...) this->guard({__VA_ARGS__})
#define KILN_NOTE_POINT(layout, c, k) (layout).note_point(c, k);

// What a view knows in check mode: the report it writes a violation to, its
// index among the arguments, and the extents its indices must lie within.
template <int Rank>
class Bounds {
 public:
  void guard(const index_t (&index)[Rank]) const {
    for (int d = 0; d < Rank; ++d)
      if (index[d] < 0 || index[d] >= shape_[d]) check_failed(report_, 1, arg_, index, Rank);
  }
  void note_point(index_t c, index_t k) const {
    report_->point[0] = c;
    report_->point[1] = k;
    report_->has_point = 1;
  }
  CheckReport* report() const { return report_; }
  int32_t arg() const { return arg_; }

 protected:
  void bind(CheckReport* report, int32_t arg, const index_t* shape) {
    report_ = report;
    arg_ = arg;
    for (int d = 0; d < Rank; ++d) shape_[d] = shape[d];
  }

 private:
  CheckReport* report_ = nullptr;
  int32_t arg_ = 0;
  index_t shape_[Rank > 0 ? Rank : 1] = {};
};
#else
#define KILN_GUARD(...) ((void)0)
#define KILN_NOTE_POINT(layout, c, k)
template <int Rank>
class Bounds {};  // nothing outside check mode
#endif

// A strided view of an argument array. Strides fixed by the specialisation are
// template constants (the optimiser sees them); the others are read at run time.
template <class T, int Rank, index_t S0 = dynamic, index_t S1 = dynamic, index_t S2 = dynamic, index_t S3 = dynamic>
class View : public Bounds<Rank> {
 public:
  KILN_FN explicit View(const kiln_arg& arg) : data_(static_cast<T*>(arg.data)) {
    for (int d = 0; d < Rank; ++d) runtime_strides_[d] = arg.strides[d];
  }
#ifdef KILN_CHECK
  View(const kiln_arg& arg, CheckReport* report, int32_t index) : View(arg) { this->bind(report, index, arg.shape); }
#endif

  KILN_FN static constexpr index_t fixed_stride(int d) { return d == 0 ? S0 : d == 1 ? S1 : d == 2 ? S2 : S3; }

  KILN_FN index_t stride(int d) const { return fixed_stride(d) != dynamic ? fixed_stride(d) : runtime_strides_[d]; }

  // The caller's strides agree with the constants this code was compiled for.
  KILN_FN static bool matches(const kiln_arg& arg) {
    for (int d = 0; d < Rank; ++d)
      if (fixed_stride(d) != dynamic && fixed_stride(d) != arg.strides[d]) return false;
    return true;
  }

  KILN_FN T& operator()(index_t i) const {
    static_assert(Rank == 1);
    KILN_GUARD(i);
    return data_[i * stride(0)];
  }
  KILN_FN T& operator()(index_t i, index_t j) const {
    static_assert(Rank == 2);
    KILN_GUARD(i, j);
    return data_[i * stride(0) + j * stride(1)];
  }
  KILN_FN T& operator()(index_t i, index_t j, index_t k) const {
    static_assert(Rank == 3);
    KILN_GUARD(i, j, k);
    return data_[i * stride(0) + j * stride(1) + k * stride(2)];
  }
  KILN_FN T& operator()(index_t i, index_t j, index_t k, index_t l) const {
    static_assert(Rank == 4);
    KILN_GUARD(i, j, k, l);
    return data_[i * stride(0) + j * stride(1) + k * stride(2) + l * stride(3)];
  }

 private:
  T* data_;
  index_t runtime_strides_[Rank > 0 ? Rank : 1];
};

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
    return n;
  }

 private:
  index_t target_;
  bool missing_;
};
#endif

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

// ---- iteration spaces ------------------------------------------------------
#ifdef KILN_GPU
// On a GPU each helper is one phase of the kernel: every thread of the grid
// takes the points (or columns) i = its global index, + the grid's thread
// count, ... of the flattened space, with consecutive threads on consecutive
// addresses of the contiguous index (coalesced). A grid-wide barrier ends
// each phase, so a phase sees everything the phases before it wrote (the w
// kernel's nabla2, then nabla4 at the neighbours). Hence two rules for
// kernel text: helpers are called by every thread alike (conditions around
// them depend only on parameters and scalars, never on an index), and the
// launch is cooperative (every block resident), which kiln's launcher does.

KILN_FN index_t thread_index() { return static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
KILN_FN index_t thread_count() { return static_cast<index_t>(gridDim.x) * blockDim.x; }
KILN_FN index_t extent(index_t start, index_t end) { return end > start ? end - start : 0; }

// The grid barrier: a counter and a generation in this module's global
// memory. The last block to arrive resets the counter and opens the next
// generation, so the barrier is ready for the next phase and the next launch.
__device__ unsigned int kiln_barrier_count;
__device__ volatile unsigned int kiln_barrier_generation;

KILN_FN void grid_sync() {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned int generation = kiln_barrier_generation;
    __threadfence();
    if (atomicAdd(&kiln_barrier_count, 1u) == gridDim.x - 1) {
      kiln_barrier_count = 0;
      __threadfence();
      kiln_barrier_generation = generation + 1;
    } else {
      while (kiln_barrier_generation == generation) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

template <class V, class F>
KILN_FN void for_each_point(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end, F&& f) {
  const index_t nh = extent(h_start, h_end), nv = extent(v_start, v_end);
  const bool horizontal_contiguous = layout.stride(0) == 1;
  for (index_t i = thread_index(); i < nh * nv; i += thread_count()) {
    if (horizontal_contiguous) f(point_index(layout, h_start + i % nh), v_start + i / nh);
    else f(point_index(layout, h_start + i / nv), v_start + i % nv);
  }
  grid_sync();
}

template <class V, class F>
KILN_FN void for_each_point(const V& layout, Range h, Range v, F&& f) {
  for_each_point(layout, h.start, h.end, v.start, v.end, static_cast<F&&>(f));
}

// A thread per column; the levels inside run in order (for_each_level).
template <class F>
KILN_FN void for_each_column(index_t h_start, index_t h_end, F&& f) {
  for (index_t c = h_start + thread_index(); c < h_end; c += thread_count()) f(c);
  grid_sync();
}

template <class F>
KILN_FN void for_each_level(index_t v_start, index_t v_end, F&& f) {
  for (index_t k = v_start; k < v_end; ++k) f(k);
}

template <class F>
KILN_FN void for_each_level_reversed(index_t v_start, index_t v_end, F&& f) {
  for (index_t k = v_end - 1; k >= v_start; --k) f(k);
}

// Column scans: a thread per column walks its levels in order.
template <class V, class F>
KILN_FN void for_each_level_up(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end,
                               F&& f) {
  for (index_t c = h_start + thread_index(); c < h_end; c += thread_count())
    for (index_t k = v_start; k < v_end; ++k) f(point_index(layout, c), k);
  grid_sync();
}

template <class V, class F>
KILN_FN void for_each_level_down(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end,
                                 F&& f) {
  for (index_t c = h_start + thread_index(); c < h_end; c += thread_count())
    for (index_t k = v_end - 1; k >= v_start; --k) f(point_index(layout, c), k);
  grid_sync();
}

// f(z, y, x) over a 3D box, the contiguous index fastest across threads.
template <class V, class F>
KILN_FN void for_each_point_3d(const V& layout, index_t z0, index_t z1, index_t y0, index_t y1, index_t x0, index_t x1,
                               F&& f) {
  const index_t nz = extent(z0, z1), ny = extent(y0, y1), nx = extent(x0, x1);
  const bool z_contiguous = layout.stride(0) == 1 && layout.stride(2) != 1;
  for (index_t i = thread_index(); i < nz * ny * nx; i += thread_count()) {
    if (z_contiguous) f(z0 + i % nz, y0 + (i / nz) % ny, x0 + i / (nz * ny));
    else f(z0 + i / (ny * nx), y0 + (i / nx) % ny, x0 + i % nx);
  }
  grid_sync();
}

#else  // the CPU: loop nests for the vectoriser

// ---- threads: every helper below is a phase --------------------------------------
// A call on n threads runs the entry on each with its context (kiln_ctx,
// passed by kiln to every helper below: runtime/kernels/codegen.cpp adds it
// to each call `kiln::for_each_...(` of the kernel's text). Each helper
// splits its points among the threads and ends with the barrier, so the next
// phase sees everything this one wrote: the GPU entry's model (grid-stride
// loop, grid barrier) on the CPU. Without a context (one thread) a helper
// takes the whole range and waits for no one.

// Thread t's part of [start, end): contiguous chunks whose boundaries lie on
// multiples of `align` indices (8 doubles: 64 bytes, so no two threads write
// one cache line of a contiguous index), the same boundary for the thread
// before and the thread after it.
inline Range share(const kiln_context* ctx, index_t start, index_t end, index_t align) {
  if (!ctx || ctx->threads <= 1 || end <= start) return {start, end};
  const index_t n = ctx->threads, t = ctx->thread, span = end - start;
  const auto boundary = [&](index_t i) {
    if (i == 0) return start;
    if (i == n) return end;
    const index_t at = start + span / n * i + span % n * i / n;
    const index_t rounded = (at + align - 1) / align * align;
    return rounded < end ? rounded : end;
  };
  return {boundary(t), boundary(t + 1)};
}

// A blocked layout's points are shared by whole blocks.
template <class V>
inline Range share_blocks(const kiln_context* ctx, const V& layout, index_t start, index_t end) {
  if (!ctx || ctx->threads <= 1 || end <= start) return {start, end};
  const index_t p = layout.nproma();
  const Range blocks = share(ctx, start / p, (end + p - 1) / p, 1);
  const index_t lo = blocks.start * p, hi = blocks.end * p;
  return {lo > start ? lo : start, hi < end ? hi : end};
}

// The part of [start, end) a helper on `layout` gives this thread.
template <class V>
inline Range share_points(const kiln_context* ctx, const V& layout, index_t start, index_t end) {
  if constexpr (is_blocked<V>) return share_blocks(ctx, layout, start, end);
  else return share(ctx, start, end, 8);
}

// The end of a phase: every thread waits for the others.
inline void phase_end(const kiln_context* ctx) {
  if (ctx && ctx->threads > 1) ctx->barrier(ctx->state);
}

// A blocked layout's points of [h_start, h_end) x [v_start, v_end): block by
// block (ICON's get_indices), levels in order (downwards when Down), and the
// points of a block the vectorised inner loop, f(BlockedIndex, k). That order
// serves every helper below: points and column scans alike. The inner loop is
// kept rolled: with nproma specialised its trip count is a constant of at
// most nproma, and LLVM unrolled it fully before the vectoriser saw it (half
// scalar code, 8x slower on blocks of 32).
template <bool Down, class V, class F>
inline void for_each_block_point(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end,
                                 F&& f) {
  const index_t p = layout.nproma();
  if (h_end <= h_start || h_start < 0) return;
  for (index_t jb = h_start / p; jb * p < h_end; ++jb) {
    const index_t base = jb * p;
    const index_t first = h_start > base ? h_start - base : 0, last = h_end - base < p ? h_end - base : p;
    for (index_t i = v_start; i < v_end; ++i) {
      const index_t k = Down ? v_end - 1 - (i - v_start) : i;
#pragma clang loop vectorize(assume_safety) unroll(disable)
      for (index_t jc = first; jc < last; ++jc) {
        KILN_NOTE_POINT(layout, base + jc, k)
        [[clang::always_inline]] f(BlockedIndex{base + jc, jc, jb}, k);
      }
    }
  }
}

// f(c, k) for every point of [h_start, h_end) x [v_start, v_end). The loop order
// follows the memory layout of `layout`: horizontal innermost when the
// horizontal index is contiguous (ICON's Fortran layout), vertical innermost
// otherwise (C order); a blocked layout block by block (above). With
// specialised strides only one loop nest remains. Threads share the
// horizontal index (whole blocks of a blocked layout).
//
// The points are independent: f must not read what f writes at another point
// of the same call (vertical dependencies belong in a column scan below). That
// is what a GPU thread mapping needs anyway, and here it lets the inner loop be
// vectorised without alias checks, which the compiler cannot build for
// neighbour-indexed reads (connectivity tables) and would otherwise give up.
// f is inlined at the call: a generic build keeps both loop nests, and the
// inliner would leave a large f out of line, which no vectoriser can see
// through. (The hints are clang's; a GPU mapping replaces these loops.)
//
// Two vector iterations per loop iteration (interleave_count(2)), which
// LLVM's cost model does not choose for a large body: a gather kernel's
// vector iteration is about a hundred instructions, and twice that in
// micro-operations where 256-bit operations are split in two (Zen 1, this
// machine's CPU), so the reorder window holds little more than one
// iteration and the next one's loads wait behind it. Interleaved, the
// loads of both are issued together and their misses overlap. Measured on
// the granule's kernels (README, "The loops ran one vector iteration at a
// time"): the gathers 1.1-1.6x faster, the point-wise kernels unchanged; the
// specialised vn diffusion had been 5% slower than its generic build in
// Fortran order, some of whose loops the cost model happened to interleave.
// A blocked layout's loop (above) keeps one: on blocks of 32 it gained
// nothing. Points stay independent, so results are the same bit for bit.
template <class V, class F>
inline void for_each_point(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end, index_t v_start,
                           index_t v_end, F&& f) {
  const Range h = share_points(ctx, layout, h_start, h_end);
  if constexpr (is_blocked<V>) {
    for_each_block_point<false>(layout, h.start, h.end, v_start, v_end, f);
  } else if (layout.stride(0) == 1) {
    for (index_t k = v_start; k < v_end; ++k)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
      for (index_t c = h.start; c < h.end; ++c) {
        KILN_NOTE_POINT(layout, c, k)
        [[clang::always_inline]] f(c, k);
      }
  } else {
    for (index_t c = h.start; c < h.end; ++c)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
      for (index_t k = v_start; k < v_end; ++k) {
        KILN_NOTE_POINT(layout, c, k)
        [[clang::always_inline]] f(c, k);
      }
  }
  phase_end(ctx);
}

template <class V, class F>
inline void for_each_point(const kiln_context* ctx, const V& layout, Range h, Range v, F&& f) {
  for_each_point(ctx, layout, h.start, h.end, v.start, v.end, static_cast<F&&>(f));
}

// f(c) once per column of [h_start, h_end): for scans that walk the vertical
// sequentially inside the column (use for_each_level inside). Threads share the columns.
template <class F>
inline void for_each_column(const kiln_context* ctx, index_t h_start, index_t h_end, F&& f) {
  const Range h = share(ctx, h_start, h_end, 8);
  for (index_t c = h.start; c < h.end; ++c) f(c);
  phase_end(ctx);
}

// f(k) for k in [v_start, v_end) in order: the sequential loop of a column
// scan, inside one column (no phase: the thread that has the column walks it).
template <class F>
inline void for_each_level(index_t v_start, index_t v_end, F&& f) {
  for (index_t k = v_start; k < v_end; ++k) f(k);
}

// f(k) for k from v_end - 1 down to v_start: the backward sweep of a column scan.
template <class F>
inline void for_each_level_reversed(index_t v_start, index_t v_end, F&& f) {
  for (index_t k = v_end - 1; k >= v_start; --k) f(k);
}

// Column scans: f(c, k) for every column c of [h_start, h_end), levels in
// order (upwards: v_start first; downwards: v_end - 1 first). A scan carries
// its state between levels through arrays (f reads what it wrote at level
// k - 1, or k + 1 going down), never through variables, so any order that
// keeps each column's levels in sequence is the same computation. When the
// columns are contiguous (ICON's Fortran order) the levels go outside and the
// columns, independent at each level, are the vectorised inner loop: a walk
// down one column would stride through memory at every level (measured 11x
// slower for the tridiagonal solver). When the levels are contiguous (C
// order), column by column. Threads share the columns.
template <class V, class F>
inline void for_each_level_up(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end,
                              index_t v_start, index_t v_end, F&& f) {
  const Range h = share_points(ctx, layout, h_start, h_end);
  if constexpr (is_blocked<V>) {
    for_each_block_point<false>(layout, h.start, h.end, v_start, v_end, f);
  } else if (layout.stride(0) == 1) {
    for (index_t k = v_start; k < v_end; ++k)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
      for (index_t c = h.start; c < h.end; ++c) {
        KILN_NOTE_POINT(layout, c, k)
        [[clang::always_inline]] f(c, k);
      }
  } else {
    for (index_t c = h.start; c < h.end; ++c)
      for (index_t k = v_start; k < v_end; ++k) {
        KILN_NOTE_POINT(layout, c, k)
        f(c, k);
      }
  }
  phase_end(ctx);
}

template <class V, class F>
inline void for_each_level_down(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end,
                                index_t v_start, index_t v_end, F&& f) {
  const Range h = share_points(ctx, layout, h_start, h_end);
  if constexpr (is_blocked<V>) {
    for_each_block_point<true>(layout, h.start, h.end, v_start, v_end, f);
  } else if (layout.stride(0) == 1) {
    for (index_t k = v_end - 1; k >= v_start; --k)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
      for (index_t c = h.start; c < h.end; ++c) {
        KILN_NOTE_POINT(layout, c, k)
        [[clang::always_inline]] f(c, k);
      }
  } else {
    for (index_t c = h.start; c < h.end; ++c)
      for (index_t k = v_end - 1; k >= v_start; --k) {
        KILN_NOTE_POINT(layout, c, k)
        f(c, k);
      }
  }
  phase_end(ctx);
}

// f(z, y, x) over a 3D box; the innermost loop is the contiguous index of
// `layout`. Threads share the outermost index.
template <class V, class F>
inline void for_each_point_3d(const kiln_context* ctx, const V& layout, index_t z0, index_t z1, index_t y0, index_t y1,
                              index_t x0, index_t x1, F&& f) {
  if (layout.stride(0) == 1 && layout.stride(2) != 1) {
    const Range xs = share(ctx, x0, x1, 1);
    for (index_t x = xs.start; x < xs.end; ++x)
      for (index_t y = y0; y < y1; ++y)
        for (index_t z = z0; z < z1; ++z) f(z, y, x);
  } else {
    const Range zs = share(ctx, z0, z1, 1);
    for (index_t z = zs.start; z < zs.end; ++z)
      for (index_t y = y0; y < y1; ++y)
        for (index_t x = x0; x < x1; ++x) f(z, y, x);
  }
  phase_end(ctx);
}

#endif  // KILN_GPU

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

// ---- math through builtins ---------------------------------------------------
// NVRTC has no __builtin_sqrt and friends but declares CUDA's math functions
// itself (as hipRTC does HIP's): the device side calls those.
#ifdef KILN_GPU
KILN_FN double sqrt(double x) { return ::sqrt(x); }
KILN_FN double fabs(double x) { return ::fabs(x); }
KILN_FN double fmin(double a, double b) { return ::fmin(a, b); }
KILN_FN double fmax(double a, double b) { return ::fmax(a, b); }
KILN_FN double pow(double a, double b) { return ::pow(a, b); }
KILN_FN double exp(double x) { return ::exp(x); }
KILN_FN double log(double x) { return ::log(x); }
#else
inline double sqrt(double x) { return __builtin_sqrt(x); }
inline double fabs(double x) { return __builtin_fabs(x); }
inline double fmin(double a, double b) { return __builtin_fmin(a, b); }
inline double fmax(double a, double b) { return __builtin_fmax(a, b); }
inline double pow(double a, double b) { return __builtin_pow(a, b); }
inline double exp(double x) { return __builtin_exp(x); }
inline double log(double x) { return __builtin_log(x); }
#endif
// NaN: min and max are NumPy's minimum and maximum (GT4Py's, so icon4py's):
// a NaN in either operand gives NaN, as a NaN in the model should show. fmin
// and fmax are C's: a NaN operand is dropped, the other returned. (x != x
// is false for integers: the test folds away.)
template <class T>
KILN_FN T min(T a, T b) { return a != a ? a : b != b ? b : b < a ? b : a; }
template <class T>
KILN_FN T max(T a, T b) { return a != a ? a : b != b ? b : a < b ? b : a; }

}  // namespace kiln
