// kiln's kernel prelude: the only thing a kernel source sees. No host headers:
// <cmath> alone costs ~150 ms of parsing per compile, and the same prelude must
// later serve NVRTC and hipRTC, which have none. Math goes through compiler
// builtins; loops over the domain go through the iteration helpers below, so
// that one kernel text becomes vectorised loops here and a thread mapping on GPUs.
//
// The runtime pastes this text in front of every generated translation unit;
// its bytes are part of every cache key.

using int8_t = __INT8_TYPE__;
using int32_t = __INT32_TYPE__;
using int64_t = __INT64_TYPE__;
using uint32_t = __UINT32_TYPE__;
using uint64_t = __UINT64_TYPE__;

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
static_assert(sizeof(kiln_arg) == 88 && __builtin_offsetof(kiln_arg, strides) == 40 &&
              __builtin_offsetof(kiln_arg, scalar) == 72 && __builtin_offsetof(kiln_arg, type) == 80);
static_assert(sizeof(kiln_value) == 8);

namespace kiln {

using index_t = int64_t;

// A stride that is not a compile-time constant.
inline constexpr index_t dynamic = -1;

// A strided view of an argument array. Strides fixed by the specialisation are
// template constants (the optimiser sees them); the others are read at run time.
template <class T, int Rank, index_t S0 = dynamic, index_t S1 = dynamic, index_t S2 = dynamic, index_t S3 = dynamic>
class View {
 public:
  explicit View(const kiln_arg& arg) : data_(static_cast<T*>(arg.data)) {
    for (int d = 0; d < Rank; ++d) runtime_strides_[d] = arg.strides[d];
  }

  static constexpr index_t fixed_stride(int d) { return d == 0 ? S0 : d == 1 ? S1 : d == 2 ? S2 : S3; }

  index_t stride(int d) const { return fixed_stride(d) != dynamic ? fixed_stride(d) : runtime_strides_[d]; }

  // The caller's strides agree with the constants this code was compiled for.
  static bool matches(const kiln_arg& arg) {
    for (int d = 0; d < Rank; ++d)
      if (fixed_stride(d) != dynamic && fixed_stride(d) != arg.strides[d]) return false;
    return true;
  }

  T& operator()(index_t i) const {
    static_assert(Rank == 1);
    return data_[i * stride(0)];
  }
  T& operator()(index_t i, index_t j) const {
    static_assert(Rank == 2);
    return data_[i * stride(0) + j * stride(1)];
  }
  T& operator()(index_t i, index_t j, index_t k) const {
    static_assert(Rank == 3);
    return data_[i * stride(0) + j * stride(1) + k * stride(2)];
  }
  T& operator()(index_t i, index_t j, index_t k, index_t l) const {
    static_assert(Rank == 4);
    return data_[i * stride(0) + j * stride(1) + k * stride(2) + l * stride(3)];
  }

 private:
  T* data_;
  index_t runtime_strides_[Rank > 0 ? Rank : 1];
};

// ---- iteration spaces ------------------------------------------------------

// f(c, k) for every point of [h_start, h_end) x [v_start, v_end). The loop order
// follows the memory layout of `layout`: horizontal innermost when the
// horizontal index is contiguous (ICON's Fortran layout), vertical innermost
// otherwise (C order). With specialised strides only one loop nest remains.
template <class V, class F>
inline void for_each_point(const V& layout, index_t h_start, index_t h_end, index_t v_start, index_t v_end, F&& f) {
  if (layout.stride(0) == 1) {
    for (index_t k = v_start; k < v_end; ++k)
      for (index_t c = h_start; c < h_end; ++c) f(c, k);
  } else {
    for (index_t c = h_start; c < h_end; ++c)
      for (index_t k = v_start; k < v_end; ++k) f(c, k);
  }
}

// f(c) once per column of [h_start, h_end): for scans that walk the vertical
// sequentially inside the column (use for_each_level inside).
template <class F>
inline void for_each_column(index_t h_start, index_t h_end, F&& f) {
  for (index_t c = h_start; c < h_end; ++c) f(c);
}

// f(k) for k in [v_start, v_end) in order: the sequential loop of a column scan.
template <class F>
inline void for_each_level(index_t v_start, index_t v_end, F&& f) {
  for (index_t k = v_start; k < v_end; ++k) f(k);
}

// f(z, y, x) over a 3D box; the innermost loop is the contiguous index of `layout`.
template <class V, class F>
inline void for_each_point_3d(const V& layout, index_t z0, index_t z1, index_t y0, index_t y1, index_t x0, index_t x1,
                              F&& f) {
  if (layout.stride(0) == 1 && layout.stride(2) != 1) {
    for (index_t x = x0; x < x1; ++x)
      for (index_t y = y0; y < y1; ++y)
        for (index_t z = z0; z < z1; ++z) f(z, y, x);
  } else {
    for (index_t z = z0; z < z1; ++z)
      for (index_t y = y0; y < y1; ++y)
        for (index_t x = x0; x < x1; ++x) f(z, y, x);
  }
}

// ---- math through builtins ---------------------------------------------------

inline double sqrt(double x) { return __builtin_sqrt(x); }
inline double fabs(double x) { return __builtin_fabs(x); }
inline double fmin(double a, double b) { return __builtin_fmin(a, b); }
inline double fmax(double a, double b) { return __builtin_fmax(a, b); }
inline double pow(double a, double b) { return __builtin_pow(a, b); }
inline double exp(double x) { return __builtin_exp(x); }
inline double log(double x) { return __builtin_log(x); }
template <class T>
inline T min(T a, T b) { return b < a ? b : a; }
template <class T>
inline T max(T a, T b) { return a < b ? b : a; }

}  // namespace kiln
