// Cache tiers and trust at the Runtime: read-only tiers (KILN_CACHE_PATH) are
// searched before the writable folder and never written; a tier or a cache
// folder that others can write is refused and the run goes on without it.
#include <sys/stat.h>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

const char* kName = "update_theta_and_exner";

// Fills `dir` with the entry of one specialisation; returns its key.
std::string fill(const std::filesystem::path& dir, ThetaCase& c) {
  Runtime rt(config_for(dir));
  return rt.kernel(kName, c.spec(1, 15, 0, 4)).key();
}

TEST(Tiers, ReadOnlyTierServesHitsAndIsNeverWritten) {
  TempDir shipped, own;
  ThetaCase c(16, 4, true), ref(16, 4, true);
  fill(shipped.path(), c);
  const auto before = entry_files(shipped.path());

  Config config = config_for(own.path());
  config.read_only_tiers = {shipped.path()};
  Runtime rt(config);
  c.run(rt.kernel(kName, c.spec(1, 15, 0, 4)));
  ref.reference(1, 15, 0, 4);
  expect_close(c.theta_v, ref.theta_v);
  expect_close(c.exner, ref.exner);
  EXPECT_EQ(rt.metrics().kernels.at(kName).disk_hits, 1u);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 0u);
  // A miss in every tier is compiled into the writable one only.
  rt.kernel(kName, c.spec(2, 14, 0, 4));
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 1u);
  EXPECT_EQ(entry_files(own.path()).size(), 1u);
  EXPECT_EQ(entry_files(shipped.path()), before);
}

TEST(Tiers, BadEntryInAReadOnlyTierIsAMissAndStays) {
  TempDir shipped, own;
  ThetaCase c(16, 4, false);
  fill(shipped.path(), c);
  const std::filesystem::path entry = entry_files(shipped.path()).at(0);
  std::filesystem::resize_file(entry, 10);

  Config config = config_for(own.path());
  config.read_only_tiers = {shipped.path()};
  Runtime rt(config);
  rt.kernel(kName, c.spec(1, 15, 0, 4));
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 1u);
  EXPECT_EQ(std::filesystem::file_size(entry), 10u);  // not ours to remove
  EXPECT_EQ(entry_files(own.path()).size(), 1u);
}

TEST(Tiers, WorldWritableTierIsRefusedUnlessTrusted) {
  TempDir shipped, own, other;
  ThetaCase c(16, 4, false);
  fill(shipped.path(), c);
  ASSERT_EQ(::chmod(shipped.path().c_str(), 0777), 0);

  Config config = config_for(own.path());
  config.read_only_tiers = {shipped.path()};
  {
    ::testing::internal::CaptureStderr();
    Runtime rt(config);
    rt.kernel(kName, c.spec(1, 15, 0, 4));
    EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 1u);  // not loaded from the refused tier
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find(shipped.path().string()), std::string::npos) << log;
    EXPECT_NE(log.find("world-writable"), std::string::npos) << log;
  }
  config = config_for(other.path());
  config.read_only_tiers = {shipped.path()};
  config.trusted_dirs = {shipped.path()};
  Runtime trusting(config);
  trusting.kernel(kName, c.spec(1, 15, 0, 4));
  EXPECT_EQ(trusting.metrics().kernels.at(kName).disk_hits, 1u);
  EXPECT_EQ(trusting.metrics().kernels.at(kName).compiles, 0u);
}

TEST(Tiers, WorldWritableCacheFolderIsNotUsed) {
  TempDir dir;
  ThetaCase c(16, 4, false);
  fill(dir.path(), c);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  Runtime rt(config_for(dir.path()));
  rt.kernel(kName, c.spec(1, 15, 0, 4));
  rt.kernel(kName, c.spec(2, 15, 0, 4));
  EXPECT_EQ(rt.metrics().kernels.at(kName).disk_hits, 0u);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 2u);
  EXPECT_EQ(entry_files(dir.path()).size(), 1u);  // nothing written there either
}

}  // namespace
}  // namespace kiln::testing
