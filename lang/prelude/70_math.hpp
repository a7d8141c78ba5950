// ---- math through builtins ---------------------------------------------------
// NVRTC has no __builtin_sqrt and friends but declares CUDA's math functions
// itself (as hipRTC does HIP's): the device side calls those.
// C's functions of one and two doubles, the same names on both sides: what
// GT4Py's math builtins (gt4py.next.ffront.fbuiltins) map to, under C's
// names (arcsin is asin, gamma is tgamma, power is pow). On the CPU each is
// libm's function (kiln compiles with -fno-math-errno and no fast-math, so
// results are libm's bit for bit; sqrt, fabs, floor, ceil, trunc, round,
// fmin and fmax become instructions); on a GPU CUDA's or HIP's, which
// differ from libm by their documented error bounds.
// Each also for float under C's name with an f (sinf, powf): GT4Py's
// float32 fields, libm's float functions on the CPU, CUDA's or HIP's on a GPU
// (names apart rather than overloads, so that kiln::sqrt(2) stays unambiguous).
#ifdef KILN_GPU
#define KILN_MATH_1(name)                                    \
  KILN_FN double name(double x) { return ::name(x); }        \
  KILN_FN float name##f(float x) { return ::name##f(x); }
#define KILN_MATH_2(name)                                                 \
  KILN_FN double name(double a, double b) { return ::name(a, b); }        \
  KILN_FN float name##f(float a, float b) { return ::name##f(a, b); }
#else
#define KILN_MATH_1(name)                                               \
  inline double name(double x) { return __builtin_##name(x); }          \
  inline float name##f(float x) { return __builtin_##name##f(x); }
#define KILN_MATH_2(name)                                                       \
  inline double name(double a, double b) { return __builtin_##name(a, b); }     \
  inline float name##f(float a, float b) { return __builtin_##name##f(a, b); }
#endif
KILN_MATH_1(sqrt)
KILN_MATH_1(cbrt)
KILN_MATH_1(fabs)
KILN_MATH_1(exp)
KILN_MATH_1(exp2)
KILN_MATH_1(expm1)
KILN_MATH_1(log)
KILN_MATH_1(log2)
KILN_MATH_1(log10)
KILN_MATH_1(log1p)
KILN_MATH_1(sin)
KILN_MATH_1(cos)
KILN_MATH_1(tan)
KILN_MATH_1(asin)
KILN_MATH_1(acos)
KILN_MATH_1(atan)
KILN_MATH_1(sinh)
KILN_MATH_1(cosh)
KILN_MATH_1(tanh)
KILN_MATH_1(asinh)
KILN_MATH_1(acosh)
KILN_MATH_1(atanh)
KILN_MATH_1(tgamma)
KILN_MATH_1(floor)
KILN_MATH_1(ceil)
KILN_MATH_1(trunc)
KILN_MATH_1(round)
KILN_MATH_2(fmin)
KILN_MATH_2(fmax)
KILN_MATH_2(pow)
KILN_MATH_2(atan2)
KILN_MATH_2(hypot)
KILN_MATH_2(fmod)
#undef KILN_MATH_1
#undef KILN_MATH_2
// The predicates by comparison, the same code on every compiler (NVRTC has no
// __builtin_isnan): x != x only for a NaN; |x| above the largest double only
// for an infinity. Exact, since no fast-math lets the compiler assume them away.
// +infinity (GT4Py's InfinityLiteral): NVRTC has no __builtin_inf either,
// CUDA and HIP a bit cast.
#ifdef KILN_GPU
KILN_FN double infinity() { return ::__longlong_as_double(0x7ff0000000000000LL); }
#else
inline double infinity() { return __builtin_inf(); }
#endif
KILN_FN bool isnan(double x) { return x != x; }
KILN_FN bool isinf(double x) { return fabs(x) > 0x1.fffffffffffffp+1023; }
KILN_FN bool isfinite(double x) { return fabs(x) <= 0x1.fffffffffffffp+1023; }
// NaN: min and max are NumPy's minimum and maximum (GT4Py's, so icon4py's):
// a NaN in either operand gives NaN, as a NaN in the model should show. fmin
// and fmax are C's: a NaN operand is dropped, the other returned. (x != x
// is false for integers: the test folds away.)
template <class T>
KILN_FN T min(T a, T b) { return a != a ? a : b != b ? b : b < a ? b : a; }
template <class T>
KILN_FN T max(T a, T b) { return a != a ? a : b != b ? b : a < b ? b : a; }

}  // namespace kiln
