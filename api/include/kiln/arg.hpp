// How kernel arguments cross into generated code: one kiln_arg per argument,
// arrays as (data, shape, strides in elements), scalars by value. The kernel
// prelude (kernels_src/prelude) declares the same layout; both sides check it.
#pragma once

#include <cstdint>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "kiln/errors.hpp"

extern "C" {
struct kiln_arg {
  void* data;             // arrays: the element at index (0, ..., 0); scalars: nullptr
  std::int64_t shape[4];  // arrays: extent per dimension
  std::int64_t strides[4];  // arrays: in elements, per dimension
  union {
    double f64;
    std::int64_t i64;
  } scalar;               // scalars: the value (bool and int32 widened to i64)
  std::int32_t type;      // kiln::ElementType
  std::int32_t rank;      // 0 for scalars
};
union kiln_value {
  double f64;
  std::int64_t i64;
};
// One thread's part of a call that runs on several (kiln_context: thread t
// of n, and the barrier that ends each phase of the kernel). A call on one
// thread passes none (nullptr).
struct kiln_context {
  std::int32_t thread;
  std::int32_t threads;
  void (*barrier)(void* state);
  void* state;
};
}
static_assert(sizeof(kiln_arg) == 88 && offsetof(kiln_arg, strides) == 40 && offsetof(kiln_arg, scalar) == 72 &&
              offsetof(kiln_arg, type) == 80);
static_assert(sizeof(kiln_value) == 8);
static_assert(sizeof(kiln_context) == 24 && offsetof(kiln_context, barrier) == 8);

namespace kiln {

inline constexpr int kMaxRank = 4;

enum class ElementType : std::int32_t { f64 = 1, f32 = 2, i32 = 3, i64 = 4, boolean = 5 };

// The name a kernel's declarations use for the type: "double", "float", "int32", "int64", "bool".
constexpr std::string_view type_name(ElementType type) {
  switch (type) {
    case ElementType::f64: return "double";
    case ElementType::f32: return "float";
    case ElementType::i32: return "int32";
    case ElementType::i64: return "int64";
    case ElementType::boolean: return "bool";
  }
  return "unknown";
}

// Bytes per element (bool: one byte, as C++ stores it).
constexpr std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::f64:
    case ElementType::i64: return 8;
    case ElementType::f32:
    case ElementType::i32: return 4;
    case ElementType::boolean: return 1;
  }
  return 0;
}

template <class T>
constexpr ElementType element_type() {
  if constexpr (std::is_same_v<T, double>) return ElementType::f64;
  else if constexpr (std::is_same_v<T, float>) return ElementType::f32;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ElementType::i32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ElementType::i64;
  else if constexpr (std::is_same_v<T, bool>) return ElementType::boolean;
  else static_assert(sizeof(T) == 0, "kiln: unsupported element type");
}

// An array view with explicit strides (in elements, not bytes).
template <class T>
kiln_arg array(T* data, std::span<const std::int64_t> shape, std::span<const std::int64_t> strides) {
  if (shape.size() != strides.size() || shape.empty() || shape.size() > kMaxRank)
    throw ArgumentError("kiln::array: shape and strides need the same rank, 1 to 4");
  kiln_arg arg{};
  arg.data = const_cast<std::remove_const_t<T>*>(data);
  arg.type = static_cast<std::int32_t>(element_type<std::remove_const_t<T>>());
  arg.rank = static_cast<std::int32_t>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    arg.shape[d] = shape[d];
    arg.strides[d] = strides[d];
  }
  return arg;
}

// Row-major (C, NumPy) order: the last index is contiguous. A field
// [n_cells][n_levels] has strides {n_levels, 1}.
template <class T>
kiln_arg c_array(T* data, std::initializer_list<std::int64_t> shape) {
  std::int64_t strides[kMaxRank] = {};
  std::int64_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= shape.begin()[d];
  }
  return array(data, std::span(shape.begin(), shape.size()), std::span<const std::int64_t>(strides, shape.size()));
}

// Column-major (Fortran) order: the first index is contiguous. ICON's
// (nproma, nlev) fields, also the layout GPUs need for coalesced access.
template <class T>
kiln_arg f_array(T* data, std::initializer_list<std::int64_t> shape) {
  std::int64_t strides[kMaxRank] = {};
  std::int64_t step = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    strides[d] = step;
    step *= shape.begin()[d];
  }
  return array(data, std::span(shape.begin(), shape.size()), std::span<const std::int64_t>(strides, shape.size()));
}

template <class T>
kiln_arg scalar(T value) {
  kiln_arg arg{};
  arg.type = static_cast<std::int32_t>(element_type<T>());
  if constexpr (std::is_floating_point_v<T>) arg.scalar.f64 = static_cast<double>(value);
  else arg.scalar.i64 = static_cast<std::int64_t>(value);
  return arg;
}

// The bytes an array view spans, from its element (0, ..., 0) to one past its
// last: what a copy of it takes (to device memory, for a GpuKernel). 0 for a
// scalar or an array with an empty dimension. A negative stride is refused
// (ArgumentError): such a view does not start at its lowest address.
inline std::size_t extent_bytes(const kiln_arg& a) {
  if (a.rank == 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < a.rank; ++d) {
    if (a.shape[d] == 0) return 0;
    if (a.strides[d] < 0) throw ArgumentError("kiln::extent_bytes: a negative stride (dimension " +
                                              std::to_string(d) + ")");
    last += (a.shape[d] - 1) * a.strides[d];
  }
  return static_cast<std::size_t>(last + 1) * element_size(static_cast<ElementType>(a.type));
}

}  // namespace kiln
