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
//
// Where the horizontal index is contiguous, the levels run inside tiles of
// horizontal_tile points, not over the whole range: a gather kernel reads
// per-point arrays (its connectivity table, coefficients along it) at every
// level, and a tile's rows of them stay in L2 from one level to the next
// instead of coming again from L3 (vn's: 3.2 MB on the granule's torus,
// 30720 edges x 104 bytes; 4096 of them 425 KB). kiln_alternating_bench,
// Fortran order, 128x80 torus, 80 levels, specialised, one thread, this
// 2-core Xeon (2 MB L2), tiles of 4096 over none, several runs: vn
// 0.83-0.95x, the tridiagonal solver 0.81x, temporary fields 0.91x, RBF
// (1.2 MB, in L2 anyway) 0.98x; the point-wise interpolate and theta
// 1.02x (each tile-level restarts the prefetcher's streams: 1.04x with
// 2048, 1.01x with 8192, whose gains were those of 4096). Levels inside
// groups of 8 points instead (each group's table rows read once for all
// its levels, gtfn's order) ran 2.2-2.4x slower: every level is another
// page, and the prefetcher follows none of them. Each point's arithmetic
// is unchanged, so are its results, bit for bit.
// The loop nest of for_each_point and for_each_level_up, which differ only
// where the levels are contiguous (C order): a point loop vectorises the
// levels, a column scan keeps each column's levels in sequence.
inline constexpr index_t horizontal_tile = 4096;

template <bool LevelsInSequence, class V, class F>
inline void walk_points(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end, index_t v_start,
                        index_t v_end, F& f) {
  walked(layout, h_start, h_end);  // a temporary: only what it holds
  const Range h = share_points(ctx, layout, h_start, h_end);
  if constexpr (is_blocked<V>) {
    for_each_block_point<false>(layout, h.start, h.end, v_start, v_end, f);
  } else if (layout.stride(0) == 1) {
    for (index_t t = h.start; t < h.end; t += horizontal_tile) {
      const index_t t_end = h.end - t > horizontal_tile ? t + horizontal_tile : h.end;
      for (index_t k = v_start; k < v_end; ++k)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
        for (index_t c = t; c < t_end; ++c) {
          KILN_NOTE_POINT(layout, c, k)
          [[clang::always_inline]] f(c, k);
        }
    }
  } else if constexpr (LevelsInSequence) {
    for (index_t c = h.start; c < h.end; ++c)
      for (index_t k = v_start; k < v_end; ++k) {
        KILN_NOTE_POINT(layout, c, k)
        f(c, k);
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
inline void for_each_point(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end, index_t v_start,
                           index_t v_end, F&& f) {
  walk_points<false>(ctx, layout, h_start, h_end, v_start, v_end, f);
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
  walk_points<true>(ctx, layout, h_start, h_end, v_start, v_end, f);
}

template <class V, class F>
inline void for_each_level_down(const kiln_context* ctx, const V& layout, index_t h_start, index_t h_end,
                                index_t v_start, index_t v_end, F&& f) {
  walked(layout, h_start, h_end);  // a temporary: only what it holds
  const Range h = share_points(ctx, layout, h_start, h_end);
  if constexpr (is_blocked<V>) {
    for_each_block_point<true>(layout, h.start, h.end, v_start, v_end, f);
  } else if (layout.stride(0) == 1) {
    for (index_t t = h.start; t < h.end; t += horizontal_tile) {  // tiles: see walk_points
      const index_t t_end = h.end - t > horizontal_tile ? t + horizontal_tile : h.end;
      for (index_t k = v_end - 1; k >= v_start; --k)
#pragma clang loop vectorize(assume_safety) interleave_count(2)
        for (index_t c = t; c < t_end; ++c) {
          KILN_NOTE_POINT(layout, c, k)
          [[clang::always_inline]] f(c, k);
        }
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

