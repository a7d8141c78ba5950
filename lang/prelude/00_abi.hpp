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
static_assert(sizeof(bool) == 1);  // bool arrays: one byte per element, as the caller's (kiln::element_size)
#if !defined(__CUDACC__) || defined(__clang__)  // NVRTC lacks __builtin_offsetof
static_assert(__builtin_offsetof(kiln_arg, strides) == 40 && __builtin_offsetof(kiln_arg, scalar) == 72 &&
              __builtin_offsetof(kiln_arg, type) == 80);
#endif

namespace kiln {

using index_t = int64_t;

// A stride that is not a compile-time constant.
inline constexpr index_t dynamic = -1;

