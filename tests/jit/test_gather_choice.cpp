// Neighbour reads as gathers or as scalar loads (jit/compiler/frontend.hpp,
// prefer_gathers): the default follows LLVM's tuning for the CPU compiled for
// (fast-gather: Intel from Skylake on, not AMD Zen), and a request's
// "+prefer-no-gather" or "-prefer-no-gather" (what KILN_GATHER sends) decides
// instead. Tested on the front end itself, object by object: the choice
// reaches the code generator, and each default is the object of one explicit
// choice, so a key that names the CPU and the request's features names one object.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "jit/compiler/frontend.hpp"
#include "jit/compiler_module.hpp"
#include "tests/jit/frontend_fixture.hpp"

namespace kiln::jit::compiler {
namespace {

using test::frontend;  // one front end per test process, as one per worker

// A neighbour read per lane: with AVX-512, LLVM 19 vectorises it with
// vgatherdpd unless prefer-no-gather is set.
constexpr std::string_view kGatherLoop =
    "extern \"C\" void kiln_gather(double* __restrict y, const double* __restrict x, const int* __restrict idx,\n"
    "                              long n) {\n"
    "  for (long i = 0; i < n; ++i) y[i] = 2.0 * x[idx[i]] + x[idx[i] + 1];\n"
    "}\n";

std::vector<char> object(std::string_view cpu, std::string_view features) {
  Request request{kGatherLoop, "gather.cpp", cpu, features, "-O3", "on"};
  const Outcome outcome = frontend().compile(request);
  if (!outcome.ok) throw std::runtime_error("compile for '" + std::string(cpu) + "' failed: " + outcome.diagnostics);
  return outcome.object;
}

TEST(GatherChoice, FollowsLlvmsFastGatherTuning) {
  // Intel's server and client cores from Skylake on, and x86-64-v4: gathers.
  for (const char* cpu : {"skylake", "skylake-avx512", "icelake-server", "sapphirerapids", "x86-64-v4"})
    EXPECT_TRUE(frontend().prefer_gathers(cpu)) << cpu;
  // AMD's Zen (no fast-gather in LLVM; Zen 4 measured slower with gathers),
  // Haswell, the generic levels, and a CPU LLVM does not know: scalar loads.
  for (const char* cpu : {"znver2", "znver3", "znver4", "znver5", "haswell", "x86-64", "x86-64-v3", "no-such-cpu"})
    EXPECT_FALSE(frontend().prefer_gathers(cpu)) << cpu;
}

TEST(GatherChoice, TheDefaultIsOneExplicitChoicesObject) {
  // Both CPUs have AVX-512, so both choices are open to LLVM: the objects differ.
  for (const char* cpu : {"skylake-avx512", "znver4"}) {
    const std::vector<char> gathers = object(cpu, "-prefer-no-gather");
    const std::vector<char> scalar = object(cpu, "+prefer-no-gather");
    EXPECT_NE(gathers, scalar) << cpu << ": the choice does not reach the code generator";
    EXPECT_EQ(object(cpu, ""), frontend().prefer_gathers(cpu) ? gathers : scalar) << cpu;
    // The last sign a request names wins.
    EXPECT_EQ(object(cpu, "+prefer-no-gather,-prefer-no-gather"), gathers) << cpu;
  }
}

TEST(GatherChoice, TheRequestsChoiceReachesAHostCompile) {
  // No CPU named: the host's CPU and features, then the request's.
  const std::vector<char> gathers = object("", "-prefer-no-gather");
  const std::vector<char> scalar = object("", "+prefer-no-gather");
  const std::vector<char> by_default = object("", "");
  EXPECT_EQ(by_default, frontend().prefer_gathers(frontend().host_cpu()) ? gathers : scalar);
  if (frontend().host_features().find("+avx512f") == std::string::npos)
    GTEST_SKIP() << "this host has no AVX-512: LLVM may use no gathers either way";
  EXPECT_NE(gathers, scalar);
}

TEST(GatherChoice, AnUnknownFeatureInTheRequestIsRefusedOnTheHostToo) {
  Request request{kGatherLoop, "gather.cpp", "", "+kiln-no-such-feature", "-O3", "on"};
  const Outcome outcome = frontend().compile(request);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.diagnostics.find("+kiln-no-such-feature"), std::string::npos) << outcome.diagnostics;
}

}  // namespace
}  // namespace kiln::jit::compiler
