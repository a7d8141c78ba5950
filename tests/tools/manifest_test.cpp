// Manifests: the index's records as entries, JSON both ways, and the cross
// product of listed static values.
#include "tools/manifest.hpp"

#include <gtest/gtest.h>

namespace kiln::tools {
namespace {

cache::IndexRecord record(std::string kernel, std::string backend, std::string target, std::string spec) {
  cache::IndexRecord r;
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

}  // namespace
}  // namespace kiln::tools
