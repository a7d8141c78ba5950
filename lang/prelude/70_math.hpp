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
