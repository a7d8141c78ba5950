// Manifests: the index's records as entries, JSON both ways, the cross
// product of listed static values, and user kernels' files and digests.
#include "cli/manifest.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

CacheRecord record(std::string kernel, std::string backend, std::string target, std::string spec) {
  CacheRecord r;
  r.kernel = std::move(kernel);
  r.backend = std::move(backend);
  r.target = std::move(target);
  r.specialisation = std::move(spec);
  return r;
}

// What apply_diffusion_to_vn declares, as far as these tests need.
KernelDeclaration vn() {
  return {"apply_diffusion_to_vn",
          {{"vn", ElementType::f64, 2}, {"fac_bdydiff_v", ElementType::f64, 0}},
          {{"horizontal_start", ElementType::i64, true},
           {"horizontal_end", ElementType::i64, true},
           {"limited_area", ElementType::boolean, false},
           {"start_2nd_nudge_line_idx_e", ElementType::i64, false}}};
}

TEST(Manifest, IndexRecordsBecomeEntriesInAStableOrder) {
  const auto entries = manifest_from_index({
      record("update_theta_and_exner [cuda sm_90]", "cuda", "sm_90", R"({"n":1})"),
      record("update_theta_and_exner (generic)", "cpu", "x86_64 znver3 +avx2", R"({"n":2})"),
      record("apply_diffusion_to_vn", "cpu", "x86_64 znver3 +avx2", R"({"n":3})"),
      record("apply_diffusion_to_vn", "cpu", "x86_64 znver3 +avx2", R"({"n":3})"),  // the same twice
  });
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].kernel, "apply_diffusion_to_vn");
  EXPECT_EQ(entries[1].kernel, "update_theta_and_exner");
  EXPECT_EQ(entries[1].mode, Mode::generic);
  EXPECT_EQ(entries[1].backend, "cpu");
  EXPECT_EQ(entries[1].arch, "");  // the CPU's is this host's, whoever reads it
  EXPECT_EQ(entries[2].backend, "cuda");
  EXPECT_EQ(entries[2].arch, "sm_90");
  EXPECT_EQ(entries[2].mode, Mode::specialised);
}

TEST(Manifest, JsonRoundTrips) {
  const std::vector<ManifestEntry> entries = {
      {"apply_diffusion_to_vn", Mode::specialised, "cpu", "", R"({"horizontal_end":9,"limited_area":true,"vn":[1,9]})"},
      {"update_theta_and_exner", Mode::generic, "hip", "gfx90a", R"({"rd_o_cvd":0.4})"}};
  EXPECT_EQ(parse_manifest(manifest_json(entries)), entries);
}

TEST(Manifest, ListedStaticValuesExpandToTheirCrossProduct) {
  const ManifestEntry entry{"apply_diffusion_to_vn", Mode::specialised, "cpu", "",
                            R"({"horizontal_start": 2, "horizontal_end": 9, "limited_area": [false, true],
                                "start_2nd_nudge_line_idx_e": [4, 8, 16], "vn": [1, 9]})"};
  const std::vector<Spec> specs = expand_specialisation(entry, vn());
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[0].to_json(),
            R"({"horizontal_end":9,"horizontal_start":2,"limited_area":false,"start_2nd_nudge_line_idx_e":4,"vn":[1,9]})");
  EXPECT_EQ(specs[5].to_json(),
            R"({"horizontal_end":9,"horizontal_start":2,"limited_area":true,"start_2nd_nudge_line_idx_e":16,"vn":[1,9]})");
  for (std::size_t i = 0; i < specs.size(); ++i)
    for (std::size_t j = i + 1; j < specs.size(); ++j) EXPECT_NE(specs[i].canonical(), specs[j].canonical());
}

// Run-time values (Spec::run_time) travel as the index writes them, so a
// warm builds the binary the run will look for.
TEST(Manifest, RunTimeMarksRoundTrip) {
  Spec spec;
  spec.set("horizontal_start", 2).set("horizontal_end", 9).set("limited_area", true);
  spec.set("start_2nd_nudge_line_idx_e", 4).run_time("horizontal_start").run_time("horizontal_end");
  const ManifestEntry entry{"apply_diffusion_to_vn", Mode::specialised, "cpu", "", spec.to_json()};
  const std::vector<Spec> specs = expand_specialisation(entry, vn());
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].canonical(), spec.canonical());
  EXPECT_EQ(specs[0].to_json(), spec.to_json());
}

// ICON's blocked arrays travel too: nproma alone, or with strides and the
// block count, as the index writes them (a Fortran model's cache warmed ahead).
TEST(Manifest, BlockedArraysRoundTrip) {
  kiln_arg one_block{};
  one_block.rank = 3;
  one_block.shape[0] = 8, one_block.shape[2] = 1;
  one_block.strides[0] = 1, one_block.strides[1] = 8, one_block.strides[2] = 64;
  Spec spec;
  spec.set("horizontal_start", 2).set("horizontal_end", 9).set("limited_area", true);
  spec.set("start_2nd_nudge_line_idx_e", 4).blocked_like("vn", one_block).strides("fac_bdydiff_v", {1});
  for (const Spec& s : {spec, Spec(spec).blocked("vn", 16)}) {
    const ManifestEntry entry{"apply_diffusion_to_vn", Mode::specialised, "cpu", "", s.to_json()};
    const std::vector<Spec> specs = expand_specialisation(entry, vn());
    ASSERT_EQ(specs.size(), 1u);
    EXPECT_EQ(specs[0].canonical(), s.canonical()) << s.to_json();
  }
}

TEST(Manifest, BadInputIsNamed) {
  EXPECT_THROW(parse_manifest("not json"), Error);
  EXPECT_THROW(parse_manifest(R"({"entries": []})"), Error);  // no kiln_manifest
  EXPECT_THROW(parse_manifest(R"({"kiln_manifest": 1, "entries": [{"mode": "generic", "specialisation": {}}]})"),
               Error);
  EXPECT_THROW(
      parse_manifest(R"({"kiln_manifest": 1, "entries": [{"kernel": "k", "mode": "fast", "specialisation": {}}]})"),
      Error);
  const auto expand = [](const char* spec) {
    return expand_specialisation({"apply_diffusion_to_vn", Mode::specialised, "cpu", "", spec}, vn());
  };
  EXPECT_THROW(expand(R"({"vn": [1, 2, 3, 4, 5]})"), SpecError);        // more strides than a rank can have
  EXPECT_THROW(expand(R"({"no_such_thing": 3})"), SpecError);           // neither a parameter nor an array
  EXPECT_THROW(expand(R"({"limited_area": []})"), SpecError);           // no variant at all
  EXPECT_THROW(expand(R"({"limited_area": "yes"})"), SpecError);        // not a bool, integer or number
}

// ---- user kernels (issue 18) ----------------------------------------------------

CacheRecord user_record(std::string spec, std::string digest, std::int64_t created) {
  CacheRecord r = record("smooth", "cpu", "x86_64 znver3 +avx2", std::move(spec));
  r.kernel_file = "/home/me/kernels/smooth.kiln";
  r.kernel_digest = std::move(digest);
  r.created = created;
  return r;
}

TEST(Manifest, UserKernelEntriesCarryTheirFileAndDigest) {
  const auto entries = manifest_from_index({
      user_record(R"({"n":8})", "0123456789abcdef0123456789abcdef", 10),
      record("update_theta_and_exner", "cpu", "x86_64 znver3 +avx2", R"({"n":1})"),
  });
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].kernel, "smooth");
  EXPECT_EQ(entries[0].kernel_file, "/home/me/kernels/smooth.kiln");
  EXPECT_EQ(entries[0].kernel_digest, "0123456789abcdef0123456789abcdef");
  const std::string json = manifest_json(entries);
  EXPECT_NE(json.find(R"("kernel_file": "/home/me/kernels/smooth.kiln")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("kernel_digest": "0123456789abcdef0123456789abcdef")"), std::string::npos) << json;
  // An embedded kernel's entry has neither: once, for smooth's.
  EXPECT_EQ(json.find("kernel_file"), json.rfind("kernel_file")) << json;
  EXPECT_EQ(parse_manifest(json), entries);
}

// The cache keeps entries of a kernel's earlier text until gc; their text
// is gone, so only the latest text's entries are exported.
TEST(Manifest, OnlyAUserKernelsLatestTextIsExported) {
  const auto entries = manifest_from_index({
      user_record(R"({"n":8})", "aaaa", 10),
      user_record(R"({"n":16})", "bbbb", 20),
      user_record(R"({"n":32})", "bbbb", 15),
  });
  ASSERT_EQ(entries.size(), 2u);
  for (const ManifestEntry& e : entries) EXPECT_EQ(e.kernel_digest, "bbbb");
}

// A manifest written before entries carried kernel files: still a manifest.
TEST(Manifest, OldManifestsStillParse) {
  const auto entries = parse_manifest(R"({"kiln_manifest": 1, "entries": [
      {"kernel": "update_theta_and_exner", "mode": "generic", "backend": "cpu", "arch": "",
       "specialisation": {"rd_o_cvd": 0.4}}]})");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].kernel_file, "");
  EXPECT_EQ(entries[0].kernel_digest, "");
  EXPECT_THROW(parse_manifest(R"({"kiln_manifest": 1, "entries": [
      {"kernel": "k", "kernel_digest": 7, "specialisation": {}}]})"),
               Error);
}

// A user kernel's file, written to a folder of its own.
class ManifestKernels : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kiln_manifest_" + std::to_string(::getpid()));
  std::filesystem::path file = dir / "smooth.kiln";
  static constexpr const char* kText =
      "#pragma kiln kernel smooth\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
      "for (kiln::index_t i = 0; i < n; ++i) x(i) *= 0.5;\n";

  void SetUp() override {
    std::filesystem::create_directories(dir);
    std::ofstream(file) << kText;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static Config memory_only() {
    Config config = Config::from_env();
    config.use_disk_cache = false;
    return config;
  }
  // The entry an export of a cache holding smooth would have.
  ManifestEntry entry() const {
    Runtime rt(memory_only());
    rt.register_kernel_file(file);
    const KernelDeclaration d = rt.declaration("smooth");
    return {"smooth", Mode::generic, "cpu", "", "{}", d.file, d.source_digest};
  }
};

TEST_F(ManifestKernels, ARegisteredFileIsNamedAbsolutelyWithItsDigest) {
  Runtime rt(memory_only());
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  rt.register_kernel_file("smooth.kiln");
  std::filesystem::current_path(cwd);
  const KernelDeclaration d = rt.declaration("smooth");
  EXPECT_EQ(d.file, file.string());
  EXPECT_EQ(d.source_digest.size(), 32u);
  rt.register_kernel(std::string(kText).replace(20, 6, "smooth_text"), "text.kiln");
  EXPECT_EQ(rt.declaration("smooth_text").file, "") << "registered as text: no file";
}

TEST_F(ManifestKernels, TheManifestsFileIsRegistered) {
  const ManifestEntry e = entry();
  Runtime rt(memory_only());
  register_manifest_kernels(rt, {e, e});
  EXPECT_EQ(rt.declaration("smooth").file, file.string());
}

TEST_F(ManifestKernels, AChangedFileIsRefusedNamingKernelFileAndDigests) {
  const ManifestEntry e = entry();
  std::ofstream(file, std::ios::app) << "// edited\n";
  Runtime rt(memory_only());
  try {
    register_manifest_kernels(rt, {e});
    FAIL() << "a changed file was accepted";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("kernel 'smooth'"), std::string::npos) << what;
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_NE(what.find(e.kernel_digest), std::string::npos) << what;
    EXPECT_NE(what.find(rt.declaration("smooth").source_digest), std::string::npos) << what;
  }
}

// --kernel-file registers first: the manifest's path need not exist then.
TEST_F(ManifestKernels, AKernelRegisteredFirstNeedsNoFileOfTheManifests) {
  ManifestEntry e = entry();
  e.kernel_file = "/nowhere/smooth.kiln";
  {
    Runtime rt(memory_only());
    rt.register_kernel_file(file);
    EXPECT_NO_THROW(register_manifest_kernels(rt, {e}));
  }
  Runtime rt(memory_only());
  try {
    register_manifest_kernels(rt, {e});
    FAIL() << "a missing kernel file was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nowhere/smooth.kiln"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("--kernel-file"), std::string::npos) << error.what();
  }
  // Embedded kernels and old manifests' entries need nothing.
  EXPECT_NO_THROW(register_manifest_kernels(rt, {{"update_theta_and_exner", Mode::generic, "cpu", "", "{}"}}));
}

}  // namespace
}  // namespace kiln::cli
