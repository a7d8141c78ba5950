// The precompiled prelude (jit/compiler/prelude_pch.hpp): a compile that
// reads the prelude from its PCH gives the object a compile that parses it
// gives, byte for byte; a changed prelude or flag never reuses a PCH built
// for another; and what clang says about a kernel is said exactly as before.
//
// Cache keys hash the source and the compiler's identity (its flags): the PCH
// changes neither (Frontend::flags() and the source are what they were), and
// as the objects are the same bytes, a key still names one binary.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "jit/compiler/frontend.hpp"
#include "jit/compiler/prelude_pch.hpp"
#include "jit/compiler_module.hpp"
#include "tests/jit/frontend_fixture.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "kiln/spec.hpp"
#include "lang/binder.hpp"
#include "lang/codegen.hpp"
#include "lang/parser.hpp"
#include "lang/prelude.hpp"

namespace kiln::jit::compiler {
namespace {

using test::frontend;  // one front end per test process, as one per worker

Outcome compile(std::string_view source, bool reuse_prelude, std::string_view opt_level = "-O3",
                std::string_view fp_contract = "on", std::string_view file_name = "kernel.kiln") {
  Request request{source, file_name, "", "", opt_level, fp_contract};
  request.reuse_prelude = reuse_prelude;
  return frontend().compile(request);
}

// The second compile of a prelude (the first parses it, as without a PCH,
// and the second builds the PCH and uses it): what every later compile does.
Outcome compile_precompiled(std::string_view source, std::string_view file_name = "kernel.kiln") {
  (void)compile(source, true, "-O3", "on", file_name);
  return compile(source, true, "-O3", "on", file_name);
}

lang::KernelInfo embedded_kernel(std::string_view name) {
  for (const auto& file : kernels_src::kernels())
    if (file.name == std::string(name) + ".kiln") return lang::parse_kernel_source(file.text, file.name);
  throw std::runtime_error("no embedded kernel " + std::string(name));
}

// The translation unit the Runtime compiles: specialised on `spec`, or its
// generic build (the values read at run time).
std::string generated(std::string_view name, const Spec& spec, bool specialised) {
  const lang::KernelInfo kernel = embedded_kernel(name);
  lang::BoundSpec bound = lang::bind_spec(kernel, spec);
  if (!specialised) lang::forget_values(bound);
  return lang::generate_source(kernel, bound, specialised, lang::prelude(), "kiln_entry");
}

Spec point_wise_spec() {  // bench/kernel_cases.cpp's update_theta_and_exner
  Spec s;
  s.set("horizontal_start", 1280).set("horizontal_end", 20000).set("vertical_start", 0).set("vertical_end", 80);
  s.set("rd_o_cvd", 0.4);
  return s.strides("theta_v", {80, 1}).strides("exner", {80, 1}).strides("z_temp", {80, 1}).strides("area", {1});
}

Spec gather_spec() {  // a vertex field from edges through the V2E table
  Spec s;
  s.set("horizontal_start", 0).set("horizontal_end", 10000).set("vertical_start", 0).set("vertical_end", 80);
  return s.strides("p_e_in", {80, 1}).strides("p_u_out", {80, 1}).strides("p_v_out", {80, 1});
}

void expect_same_object(const std::string& source, std::string_view what) {
  const Outcome parsed = compile(source, false);
  const Outcome precompiled = compile_precompiled(source);
  ASSERT_TRUE(parsed.ok) << what << ": " << parsed.diagnostics;
  ASSERT_TRUE(precompiled.ok) << what << ": " << precompiled.diagnostics;
  EXPECT_FALSE(parsed.used_prelude);
  EXPECT_TRUE(precompiled.used_prelude) << what;
  EXPECT_EQ(precompiled.diagnostics, parsed.diagnostics) << what;
  EXPECT_TRUE(precompiled.object == parsed.object) << what << ": the objects differ (" << precompiled.object.size()
                                                   << " and " << parsed.object.size() << " bytes)";
}

TEST(PreludePch, FindsThePreludeLangWrites) {
  const std::string source = generated("update_theta_and_exner", point_wise_spec(), true);
  const std::size_t length = prelude_length(source);
  ASSERT_GT(length, lang::prelude().size());
  EXPECT_NE(source.substr(0, length).find(lang::prelude()), std::string::npos);
  EXPECT_EQ(source.compare(length, 26, "#line 1 \"<kiln generated: "), 0);
  EXPECT_EQ(prelude_length("int f() { return 1; }\n"), 0u);  // not generated: compiled whole
}

TEST(PreludePch, PointWiseKernelCompilesToTheSameObject) {
  const std::string specialised = generated("update_theta_and_exner", point_wise_spec(), true);
  const std::string generic = generated("update_theta_and_exner", point_wise_spec(), false);
  expect_same_object(specialised, "update_theta_and_exner, specialised");
  expect_same_object(generic, "update_theta_and_exner, generic");
  // The specialised values still fold: the two builds are not one code.
  EXPECT_FALSE(compile(specialised, true).object == compile(generic, true).object);
}

TEST(PreludePch, GatherKernelCompilesToTheSameObject) {
  const std::string specialised = generated("mo_intp_rbf_rbf_vec_interpol_vertex", gather_spec(), true);
  const std::string generic = generated("mo_intp_rbf_rbf_vec_interpol_vertex", gather_spec(), false);
  expect_same_object(specialised, "mo_intp_rbf_rbf_vec_interpol_vertex, specialised");
  expect_same_object(generic, "mo_intp_rbf_rbf_vec_interpol_vertex, generic");
  EXPECT_FALSE(compile(specialised, true).object == compile(generic, true).object);
}

// A prelude of its own (the marker is what lang writes), so that its text can change.
std::string tiny_source(int prelude_value, std::string_view body = "return kiln_value();") {
  return "#line 1 \"kiln_prelude.hpp\"\ninline int kiln_value() { return " + std::to_string(prelude_value) +
         "; }\n\n#line 1 \"<kiln generated: tiny, specialised>\"\nextern \"C\" int kiln_entry() {\n#line 1 "
         "\"tiny.kiln\"\n" +
         std::string(body) + "\n}\n";
}

TEST(PreludePch, AChangedPreludeOrFlagBuildsItsOwn) {
  const std::size_t before = frontend().prelude_builds();
  // First seen: parsed with the kernel, nothing built.
  const Outcome first = compile(tiny_source(1), true);
  ASSERT_TRUE(first.ok) << first.diagnostics;
  EXPECT_FALSE(first.used_prelude);
  EXPECT_EQ(frontend().prelude_builds(), before);
  const Outcome one = compile(tiny_source(1), true);
  const Outcome two = compile_precompiled(tiny_source(2));
  ASSERT_TRUE(one.ok && two.ok) << one.diagnostics << two.diagnostics;
  EXPECT_TRUE(one.used_prelude && two.used_prelude);
  EXPECT_EQ(frontend().prelude_builds(), before + 2);
  EXPECT_FALSE(one.object == two.object);  // 1 and 2 returned: each its own prelude's
  EXPECT_TRUE(one.object == first.object);
  EXPECT_TRUE(one.object == compile(tiny_source(1), false).object);
  EXPECT_TRUE(two.object == compile(tiny_source(2), false).object);

  // The first again: its PCH is kept, not rebuilt; and the same bytes.
  EXPECT_TRUE(compile(tiny_source(1), true).object == one.object);
  EXPECT_EQ(frontend().prelude_builds(), before + 2);

  // Each flag of the request is part of the PCH's key.
  (void)compile(tiny_source(1), true, "-O2");
  (void)compile(tiny_source(1), true, "-O3", "off");
  const Outcome o2 = compile(tiny_source(1), true, "-O2");
  const Outcome no_contract = compile(tiny_source(1), true, "-O3", "off");
  ASSERT_TRUE(o2.ok && no_contract.ok) << o2.diagnostics << no_contract.diagnostics;
  EXPECT_TRUE(o2.used_prelude && no_contract.used_prelude);
  EXPECT_EQ(frontend().prelude_builds(), before + 4);
  EXPECT_TRUE(o2.object == compile(tiny_source(1), false, "-O2").object);
  EXPECT_TRUE(no_contract.object == compile(tiny_source(1), false, "-O3", "off").object);
}

TEST(PreludePch, ThreadsShareOnePrecompiledPrelude) {
  // Compiles on several threads at once, while one of them builds the PCH:
  // those that find it being built parse the prelude; all give one object.
  const std::string source = tiny_source(5);
  const Outcome parsed = compile(source, false);
  ASSERT_TRUE(parsed.ok) << parsed.diagnostics;
  const std::size_t before = frontend().prelude_builds();
  constexpr int kThreads = 4, kEach = 3;
  std::vector<Outcome> outcomes(kThreads * kEach);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) outcomes[t * kEach + i] = compile(source, true);
      });
    for (auto& thread : threads) thread.join();
  }
  int used = 0;
  for (const Outcome& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
    EXPECT_TRUE(outcome.object == parsed.object);
    used += outcome.used_prelude ? 1 : 0;
  }
  EXPECT_EQ(frontend().prelude_builds(), before + 1);  // built once, whatever the race
  EXPECT_GT(used, 0);
  EXPECT_TRUE(compile(source, true).used_prelude);
}

TEST(PreludePch, ErrorsAreReportedAsWithoutIt) {
  const Spec spec = point_wise_spec();
  lang::KernelInfo kernel = embedded_kernel("update_theta_and_exner");
  // Line 2 of the kernel's text: an unknown name, and a prelude template
  // given what it cannot compare (its error is inside the prelude).
  const std::size_t second_line = kernel.body.find('\n') + 1;
  kernel.body.insert(second_line, "  struct S {}; (void)kiln::min(S{}, S{}); no_such_name = 1;\n");
  const std::string source = lang::generate_source(kernel, lang::bind_spec(kernel, spec), true, lang::prelude(),
                                                   "kiln_entry");
  const Outcome parsed = compile(source, false, "-O3", "on", kernel.file_name);
  const Outcome precompiled = compile_precompiled(source, kernel.file_name);
  ASSERT_FALSE(parsed.ok);
  ASSERT_FALSE(precompiled.ok);
  EXPECT_EQ(precompiled.diagnostics, parsed.diagnostics);
  EXPECT_NE(precompiled.diagnostics.find(kernel.file_name + ":2:"), std::string::npos) << precompiled.diagnostics;
  EXPECT_NE(precompiled.diagnostics.find("error: use of undeclared identifier 'no_such_name'"), std::string::npos);
  EXPECT_NE(precompiled.diagnostics.find("kiln_prelude.hpp:"), std::string::npos) << precompiled.diagnostics;
  EXPECT_EQ(precompiled.diagnostics.find("In file included from"), std::string::npos) << precompiled.diagnostics;
  EXPECT_EQ(precompiled.diagnostics.find(kPreludeHeaderPath), std::string::npos) << precompiled.diagnostics;
}

TEST(PreludePch, WarningsAreReportedAsWithoutIt) {
  const std::string source = tiny_source(3, "int unused = 1 / 0; return kiln_value();");
  const Outcome parsed = compile(source, false);
  const Outcome precompiled = compile_precompiled(source);
  ASSERT_TRUE(parsed.ok && precompiled.ok) << parsed.diagnostics;
  EXPECT_NE(parsed.diagnostics.find("tiny.kiln:1:"), std::string::npos) << parsed.diagnostics;
  EXPECT_EQ(precompiled.diagnostics, parsed.diagnostics);
  EXPECT_TRUE(precompiled.object == parsed.object);
}

TEST(PreludePch, APreludeClangWarnsAboutIsNotPrecompiled) {
  // Its warning would otherwise be said once, when the PCH is built, and not
  // by the compiles that use it.
  const std::string source =
      "#line 1 \"kiln_prelude.hpp\"\ninline int kiln_half() { return 1 / 0; }\n\n#line 1 \"<kiln generated: w>\"\n"
      "extern \"C\" int kiln_entry() { return kiln_half(); }\n";
  const Outcome parsed = compile(source, false);
  const Outcome precompiled = compile_precompiled(source);
  ASSERT_TRUE(parsed.ok) << parsed.diagnostics;
  EXPECT_NE(parsed.diagnostics.find("kiln_prelude.hpp:1:"), std::string::npos) << parsed.diagnostics;
  EXPECT_FALSE(precompiled.used_prelude);
  EXPECT_EQ(precompiled.diagnostics, parsed.diagnostics);
  EXPECT_TRUE(precompiled.object == parsed.object);
}

}  // namespace
}  // namespace kiln::jit::compiler
