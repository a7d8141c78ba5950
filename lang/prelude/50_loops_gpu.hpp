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
  walked(layout, h_start, h_end);
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
  walked(layout, h_start, h_end);
  for (index_t c = h_start + thread_index(); c < h_end; c += thread_count())
    for (index_t k = v_start; k < v_end; ++k) f(point_index(layout, c), k);
  grid_sync();
}

template <class V, class F>
KILN_FN void for_each_level_down(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end,
                                 F&& f) {
  walked(layout, h_start, h_end);
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

