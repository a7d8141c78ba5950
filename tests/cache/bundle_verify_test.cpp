// verify() and cache bundles (bundle_format.hpp): a bundle entry whose table
// decodes passes; one whose entry verifies but whose payload is no bundle is
// reported, naming its file, and left for the next batch to replace.
#include <gtest/gtest.h>

#include "cache/bundle_format.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/eviction.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

using namespace kiln::cache::testing;

std::string bundle_metadata(const Key& key) {
  IndexRecord record;
  record.key = key;
  record.kernel = "kiln.bundle";
  record.specialisation = R"({"members":2})";
  record.backend = "bundle";
  return encode_metadata(record);
}

TEST(BundleVerify, AGoodBundlePassesAndABadOneIsReportedAndLeft) {
  TempFolder dir;
  const DiskStore store(dir.path());
  const std::string a = "\x7f" "ELF a", b = "\x7f" "ELF b";
  const Key one = key_of("one"), two = key_of("two");
  const Key good_key = bundle_key({one, two}), bad_key = bundle_key({one, key_of("three")});
  const std::string good = *encode_bundle({{one, {a.data(), a.size()}}, {two, {b.data(), b.size()}}});
  ASSERT_TRUE(store.put(good_key, {good.data(), good.size()}, bundle_metadata(good_key)));
  const std::string not_a_bundle = "an entry that holds no bundle";
  ASSERT_TRUE(store.put(bad_key, {not_a_bundle.data(), not_a_bundle.size()}, bundle_metadata(bad_key)));
  // A kernel's entry whose payload is no bundle either: no bundle metadata, no check.
  ASSERT_TRUE(store.put(one, {a.data(), a.size()}));

  const VerifyResult result = value_of(verify(store));
  EXPECT_EQ(result.checked, 3u);
  EXPECT_EQ(result.bad, 1u);
  EXPECT_EQ(result.removed, 0u);
  EXPECT_TRUE(result.damage_left());
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_NE(result.problems[0].message.find(store.entry_path(bad_key).string()), std::string::npos);
  EXPECT_NE(result.problems[0].message.find("not a kiln cache bundle"), std::string::npos);
  EXPECT_TRUE(fs::exists(store.entry_path(bad_key)));
}

}  // namespace
}  // namespace kiln::cache
