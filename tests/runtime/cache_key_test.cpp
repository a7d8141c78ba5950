#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "runtime/kernels/cache_key.hpp"

namespace kiln::runtime {
namespace {

KeyInputs base() {
  return {.codegen = "codegen", .kernel_source = "src", .prelude = "prelude", .specialisation = "spec",
          .mode = "specialised", .backend = "cpu", .triple = "x86_64-pc-linux-gnu", .cpu = "znver3",
          .features = "+avx2", .toolchain = "llvm-19.1.7;module-1", .flags = "-O3", .format_version = 1};
}

TEST(CacheKey, IsDeterministic) { EXPECT_EQ(compute_key(base()), compute_key(base())); }

TEST(CacheKey, EveryInputChangesTheKey) {
  using Mutation = void (*)(KeyInputs&);
  const Mutation mutations[] = {
      [](KeyInputs& k) { k.codegen = "codegen2"; }, [](KeyInputs& k) { k.kernel_source = "src2"; },
      [](KeyInputs& k) { k.prelude = "prelude2"; },     [](KeyInputs& k) { k.specialisation = "spec2"; },
      [](KeyInputs& k) { k.mode = "generic"; },         [](KeyInputs& k) { k.backend = "cuda"; },
      [](KeyInputs& k) { k.triple = "aarch64"; },       [](KeyInputs& k) { k.cpu = "skylake"; },
      [](KeyInputs& k) { k.features = "+avx512f"; },    [](KeyInputs& k) { k.toolchain = "llvm-19.1.8"; },
      [](KeyInputs& k) { k.flags = "-O2"; },            [](KeyInputs& k) { k.format_version = 2; },
  };
  std::set<std::string> keys{compute_key(base()).hex()};
  for (Mutation mutate : mutations) {
    KeyInputs inputs = base();
    mutate(inputs);
    EXPECT_TRUE(keys.insert(compute_key(inputs).hex()).second) << "a mutation did not change the key";
  }
}

// The key of all twelve fields hashed in one builder, in the key's order:
// what compute_key() gives, whatever it hashed before and on whichever thread.
cache::Key hashed_in_full(const KeyInputs& in) {
  cache::KeyBuilder b;
  b.add("format_version", in.format_version).add("backend", in.backend).add("triple", in.triple);
  b.add("cpu", in.cpu).add("features", in.features).add("toolchain", in.toolchain).add("flags", in.flags);
  b.add("mode", in.mode).add("prelude", in.prelude).add("kernel_source", in.kernel_source);
  b.add("specialisation", in.specialisation).add("codegen", in.codegen);
  return b.finish();
}

TEST(CacheKey, TheSharedFieldsHashedOnceGiveTheKeyOfAllFieldsWhateverCameBefore) {
  KeyInputs other = base();
  other.cpu = "skylake";
  other.flags = "-O1";
  KeyInputs same_shared = base();
  same_shared.specialisation = "spec2";
  // Alternating shared fields, and a key whose shared fields are those remembered.
  for (const KeyInputs& in : {base(), other, base(), same_shared, other, same_shared})
    EXPECT_EQ(compute_key(in), hashed_in_full(in));
  cache::Key on_thread;
  std::thread([&] { on_thread = compute_key(other); }).join();
  EXPECT_EQ(on_thread, hashed_in_full(other));
}

TEST(CacheKey, CodegenIdentityIsABuildTimeDigest) {
  EXPECT_EQ(codegen_identity().size(), 32u);
  EXPECT_EQ(codegen_identity().find_first_not_of("0123456789abcdef"), std::string_view::npos);
  EXPECT_EQ(KeyInputs{}.codegen, codegen_identity());
}

TEST(CacheKey, FieldBoundariesMatter) {
  KeyInputs a = base(), b = base();
  a.cpu = "znver3+";
  a.features = "avx2";
  b.cpu = "znver3";
  b.features = "+avx2";
  EXPECT_NE(compute_key(a), compute_key(b));
}

}  // namespace
}  // namespace kiln::runtime
