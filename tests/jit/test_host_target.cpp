#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "jit/host_target.hpp"

namespace kiln::jit {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

TEST(HostTarget, IsNonEmpty) {
  const HostTarget& host = host_target();
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_FALSE(host.features.empty());
  EXPECT_NE(host.triple.find("linux"), std::string::npos) << host.triple;
}

TEST(HostTarget, IsComputedOnceAndStable) {
  const HostTarget& first = host_target();
  const HostTarget& second = host_target();
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(first.features, second.features);
}

TEST(HostTarget, FeaturesAreSignedAndSortedByName) {
  const auto features = split(host_target().features);
  ASSERT_FALSE(features.empty());
  for (const auto& feature : features) {
    ASSERT_GE(feature.size(), 2u) << host_target().features;
    EXPECT_TRUE(feature[0] == '+' || feature[0] == '-') << feature;
  }
  EXPECT_TRUE(std::is_sorted(features.begin(), features.end(),
                             [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); }))
      << host_target().features;
}

#if defined(__x86_64__)
TEST(HostTarget, X86HostHasSse2) {
  // Every x86-64 CPU has SSE2: a feature list without it was not parsed right.
  const auto features = split(host_target().features);
  EXPECT_NE(std::find(features.begin(), features.end(), "+sse2"), features.end()) << host_target().features;
}
#endif

}  // namespace
}  // namespace kiln::jit
