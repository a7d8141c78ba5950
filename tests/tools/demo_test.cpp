// `kiln demo` through the built binary: it fails (a non-zero exit, saying
// why) when the specialised and the generic runs do not agree. To make them
// disagree, the cache entry of one specialised kernel is resealed with one
// constant of its binary changed (rd_o_cvd, which specialisation bakes in),
// as a stale or tampered cache could hold it: the entry verifies and loads,
// and the warm run computes other values with it.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "cache/entry_metadata.hpp"
#include "tests/tools/kiln_process.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::testing::Result;
using kiln::testing::run_kiln_with;
using kiln::testing::TempDir;
using kiln::cache::DiskStore;
using kiln::cache::Index;
using kiln::cache::IndexRecord;
using kiln::cache::Key;

// The key of the record of `kernel` (its name as the index writes it).
std::optional<Key> key_of_kernel(const fs::path& index, const std::string& kernel) {
  for (const IndexRecord& record : Index(index).list())
    if (record.kernel == kernel) return record.key;
  return std::nullopt;
}

constexpr const char* kDemo = "demo --nx 4 --ny 4 --levels 4 --steps 2";
constexpr const char* kKernel = "update_theta_and_exner";

TEST(Demo, AgreeingRunsExitZero) {
  TempDir temp;
  const Result first = run_kiln_with(temp.path() / "cache", kDemo);
  ASSERT_TRUE(first.exited) << first.output;
  EXPECT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("max |diff| over every field: 0\n"), std::string::npos) << first.output;
}

// Tiered: the specialised side starts on the generic builds compiled at
// KILN_TIERED_OPT_LEVEL (O1) and the generic side runs -O3's, so the granule's
// every kernel compares an O1 build with an O3 one, to the bit.
TEST(Demo, ATieredRunStartingOnO1StandInsAgreesBitForBit) {
  TempDir temp;
  ::setenv("KILN_TIERED", "1", 1);
  const Result tiered = run_kiln_with(temp.path() / "cache", kDemo);
  ::unsetenv("KILN_TIERED");
  ASSERT_TRUE(tiered.exited) << tiered.output;
  EXPECT_EQ(tiered.status, 0) << tiered.output;
  EXPECT_NE(tiered.output.find("max |diff| over every field: 0\n"), std::string::npos) << tiered.output;
  // 7 O1 stand-ins and 7 generic -O3 builds at least (specialised builds not
  // started when the run ends are dropped).
  unsigned compiles = 0;
  ASSERT_EQ(std::sscanf(tiered.output.c_str() + tiered.output.find("summary: "), "summary: %u compiles", &compiles), 1)
      << tiered.output;
  EXPECT_GE(compiles, 14U) << tiered.output;
  const DiskStore store(temp.path() / "cache");
  unsigned at_o1 = 0;
  for (const IndexRecord& record : Index(temp.path() / "cache" / "index.sqlite").list()) {
    const auto metadata = store.read_metadata(record.key);
    ASSERT_TRUE(metadata.has_value() && metadata->has_value()) << record.kernel;
    const std::optional<kiln::cache::BuildRecipe> recipe = kiln::cache::decode_recipe((*metadata)->metadata);
    if (recipe && recipe->opt_level == "O1") ++at_o1;
  }
  EXPECT_EQ(at_o1, 7U) << "one O1 stand-in per kernel";
}

// --batch: every kernel asked for in one kernels() batch first, tiered and
// not: the same bits, and the steps find the batch's kernels (no more compiles).
TEST(Demo, ABatchFirstGivesTheSameRunTieredOrNot) {
  for (const char* tiered : {"0", "1"}) {
    TempDir temp;
    ::setenv("KILN_TIERED", tiered, 1);
    const Result run = run_kiln_with(temp.path() / "cache", std::string(kDemo) + " --batch");
    ::unsetenv("KILN_TIERED");
    ASSERT_TRUE(run.exited) << run.output;
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("max |diff| over every field: 0\n"), std::string::npos) << run.output;
    // 2 steps of 7 kernels in each mode: 28 look-ups, every one a memory hit.
    EXPECT_NE(run.output.find("28 memory hits"), std::string::npos) << tiered << ": " << run.output;
  }
}

TEST(Demo, DisagreeingRunsExitNonZeroSayingSo) {
  TempDir temp;
  const fs::path cache = temp.path() / "cache";
  const Result first = run_kiln_with(cache, kDemo);
  ASSERT_EQ(first.status, 0) << first.output;
  const std::optional<Key> key = key_of_kernel(cache / "index.sqlite", kKernel);
  ASSERT_TRUE(key.has_value()) << "no specialised " << kKernel << " in the index";

  // The demo's rd_o_cvd (0.4) is a constant in the specialised binary: each
  // copy of its 8 bytes becomes 0.6, and the entry is stored again whole.
  const DiskStore store(cache);
  kiln::cache::LookupResult found = store.get(*key);
  ASSERT_TRUE(found.payload.has_value()) << (found.problem ? found.problem->message : "a miss");
  std::vector<char> binary = std::move(*found.payload);
  const double was = 0.4, now = 0.6;
  char from[sizeof(double)], to[sizeof(double)];
  std::memcpy(from, &was, sizeof was);
  std::memcpy(to, &now, sizeof now);
  int patched = 0;
  for (auto at = std::search(binary.begin(), binary.end(), from, from + sizeof from); at != binary.end();
       at = std::search(at, binary.end(), from, from + sizeof from), ++patched) {
    at = std::copy(to, to + sizeof to, at);
  }
  ASSERT_GT(patched, 0) << "rd_o_cvd's bytes are not in the binary";
  const auto metadata = store.read_metadata(*key);
  ASSERT_TRUE(metadata.has_value() && metadata->has_value());
  ASSERT_TRUE(store.put(*key, binary, (*metadata)->metadata).has_value());

  const Result second = run_kiln_with(cache, kDemo);
  ASSERT_TRUE(second.exited) << second.output;
  EXPECT_NE(second.status, 0) << second.output;
  EXPECT_NE(second.output.find("kiln demo: the specialised and generic results differ (max |diff| "),
            std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("summary: 0 compiles, 14 disk hits"), std::string::npos)
      << "the forged entry was not used, or the summary did not come first: " << second.output;
}

}  // namespace
