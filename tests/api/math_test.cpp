// The prelude's math (lang/prelude/70_math.hpp; issue 33, item 11): every
// function a kernel may call, evaluated by a kernel on the CPU against this
// host's libm on ordinary, edge and out-of-domain arguments, bit for bit (the
// kernel calls libm, or an instruction that rounds exactly). The same kernel
// is compiled for CUDA with NVRTC where it is installed (the GPU branch).
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

struct MathFunction {
  const char* name;
  int arity;
  double (*host)(double, double);
};

#define ONE(f) {#f, 1, [](double a, double) { return std::f(a); }}
#define TWO(f) {#f, 2, [](double a, double b) { return std::f(a, b); }}
#define PREDICATE(f) {#f, 1, [](double a, double) { return std::f(a) ? 1.0 : 0.0; }}
const MathFunction kFunctions[] = {
    ONE(sqrt),  ONE(cbrt),  ONE(fabs),  ONE(exp),   ONE(exp2),   ONE(expm1),  ONE(log),   ONE(log2),
    ONE(log10), ONE(log1p), ONE(sin),   ONE(cos),   ONE(tan),    ONE(asin),   ONE(acos),  ONE(atan),
    ONE(sinh),  ONE(cosh),  ONE(tanh),  ONE(asinh), ONE(acosh),  ONE(atanh),  ONE(tgamma), ONE(floor),
    ONE(ceil),  ONE(trunc), ONE(round), TWO(fmin),  TWO(fmax),   TWO(pow),    TWO(atan2), TWO(hypot),
    TWO(fmod),  PREDICATE(isnan), PREDICATE(isinf), PREDICATE(isfinite)};
#undef ONE
#undef TWO
#undef PREDICATE

// One kernel, `which` picking the function: out(i) = f(x(i)[, y(i)]).
std::string math_kernel() {
  std::string text =
      "#pragma kiln kernel math_functions\n#pragma kiln array double x[n]\n#pragma kiln array double y[n]\n"
      "#pragma kiln array double out[n]\n#pragma kiln scalar int32 which\n#pragma kiln domain start end\n"
      "#pragma kiln size n contains start end\n"
      "kiln::for_each_column(start, end, [&](kiln::index_t i) {\n"
      "  const double a = x(i), b = y(i);\n  double r = 0.0;\n  switch (which) {\n";
  int which = 0;
  for (const MathFunction& f : kFunctions) {
    const std::string call = std::string("kiln::") + f.name + (f.arity == 1 ? "(a)" : "(a, b)");
    text += "    case " + std::to_string(which++) + ": r = " + call + "; break;\n";
  }
  return text + "  }\n  out(i) = r;\n});\n";
}

// The float versions (kiln::sinf, ...: GT4Py's float32 fields), against libm's float functions.
struct FloatFunction {
  const char* name;
  int arity;
  float (*host)(float, float);
};
#define ONE(fn) {#fn "f", 1, [](float a, float) { return ::fn##f(a); }}
#define TWO(fn) {#fn "f", 2, [](float a, float b) { return ::fn##f(a, b); }}
const FloatFunction kFloatFunctions[] = {
    ONE(sqrt),  ONE(cbrt),  ONE(fabs),  ONE(exp),   ONE(exp2),   ONE(expm1),  ONE(log),   ONE(log2),
    ONE(log10), ONE(log1p), ONE(sin),   ONE(cos),   ONE(tan),    ONE(asin),   ONE(acos),  ONE(atan),
    ONE(sinh),  ONE(cosh),  ONE(tanh),  ONE(asinh), ONE(acosh),  ONE(atanh),  ONE(tgamma), ONE(floor),
    ONE(ceil),  ONE(trunc), ONE(round), TWO(fmin),  TWO(fmax),   TWO(pow),    TWO(atan2), TWO(hypot),
    TWO(fmod)};
#undef ONE
#undef TWO

std::string float_math_kernel() {
  std::string text =
      "#pragma kiln kernel float_math_functions\n#pragma kiln array float x[n]\n#pragma kiln array float y[n]\n"
      "#pragma kiln array float out[n]\n#pragma kiln scalar int32 which\n#pragma kiln domain start end\n"
      "#pragma kiln size n contains start end\n"
      "kiln::for_each_column(start, end, [&](kiln::index_t i) {\n"
      "  const float a = x(i), b = y(i);\n  float r = 0.0f;\n  switch (which) {\n";
  int which = 0;
  for (const FloatFunction& f : kFloatFunctions) {
    const std::string call = std::string("kiln::") + f.name + (f.arity == 1 ? "(a)" : "(a, b)");
    text += "    case " + std::to_string(which++) + ": r = " + call + "; break;\n";
  }
  return text + "  }\n  out(i) = r;\n});\n";
}

const double kInf = std::numeric_limits<double>::infinity(), kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<double> kX = {0.5, -0.5, 2.0, -3.75, 1e-3, 10.0, 0.999, 1.0,  -1.0, 3.0,
                                710.0, -745.5, 1e300, 5e-324, 0.0, -0.0, kInf, -kInf, kNaN};
const std::vector<double> kY = {1.5, 2.0, -0.5, 0.25, 3.0, -2.0, 7.0, 0.0, 1.0, -3.0,
                                0.5, 2.5, 1e-300, 4.0, 1.0, -1.0, 2.0, kInf, 1.0};

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

TEST(PreludeMath, EveryFunctionIsTheHostsLibmBitForBit) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(math_kernel(), "math_functions.kiln");
  const std::int64_t n = static_cast<std::int64_t>(kX.size());
  Spec spec;
  const Kernel k = rt.kernel("math_functions", spec.set("start", 0).set("end", n));
  std::vector<double> x = kX, y = kY;
  for (std::int32_t which = 0; which < std::int32_t(std::size(kFunctions)); ++which) {
    const MathFunction& f = kFunctions[which];
    std::vector<double> out(kX.size(), -1.0);
    k(c_array(x.data(), {n}), c_array(y.data(), {n}), c_array(out.data(), {n}), which);
    for (std::size_t i = 0; i < kX.size(); ++i) {
      const double want = f.host(kX[i], kY[i]);
      EXPECT_TRUE(same(out[i], want)) << f.name << "(" << kX[i] << (f.arity == 2 ? ", " + std::to_string(kY[i]) : "")
                                      << ") = " << out[i] << ", libm " << want;
    }
  }
}

TEST(PreludeMath, EveryFloatFunctionIsTheHostsLibmBitForBit) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(float_math_kernel(), "float_math_functions.kiln");
  const std::int64_t n = static_cast<std::int64_t>(kX.size());
  Spec spec;
  const Kernel k = rt.kernel("float_math_functions", spec.set("start", 0).set("end", n));
  std::vector<float> x(kX.begin(), kX.end()), y(kY.begin(), kY.end());
  for (std::int32_t which = 0; which < std::int32_t(std::size(kFloatFunctions)); ++which) {
    const FloatFunction& f = kFloatFunctions[which];
    std::vector<float> out(x.size(), -1.0f);
    k(c_array(x.data(), {n}), c_array(y.data(), {n}), c_array(out.data(), {n}), which);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float want = f.host(x[i], y[i]);
      const bool same_bits = (std::isnan(out[i]) && std::isnan(want)) || std::memcmp(&out[i], &want, sizeof want) == 0;
      EXPECT_TRUE(same_bits) << f.name << "(" << x[i] << ", " << y[i] << ") = " << out[i] << ", libm " << want;
    }
  }
}

// The GPU branch of the same functions (CUDA's, through NVRTC): compiles.
TEST(PreludeMath, TheGpuBranchCompilesWithNvrtc) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(math_kernel(), "math_functions.kiln");
  Spec spec;
  spec.set("start", 0).set("end", 8);
  try {
    rt.precompile("update_theta_and_exner", ThetaCase(8, 4, false).spec(0, 8, 0, 4), {.arch = "sm_90"});
  } catch (const ToolchainError& e) {
    GTEST_SKIP() << "no NVRTC here: " << e.what();
  }
  EXPECT_EQ(rt.precompile("math_functions", spec, {.arch = "sm_90"}).size(), 32u);
  rt.register_kernel(float_math_kernel(), "float_math_functions.kiln");
  EXPECT_EQ(rt.precompile("float_math_functions", spec, {.arch = "sm_90"}).size(), 32u);
}

}  // namespace
}  // namespace kiln::testing
