// `kiln cache show` through the built binary (issue 22): an entry that
// `kiln run` cached, shown by a prefix of its key or by kernel and values,
// with its metadata, options and the translation unit it was compiled from
// (regenerated, its key checked); an unknown, malformed or ambiguous key, a
// corrupt entry, and an entry written before entries recorded their options.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/disk_store.hpp"
#include "cache/entry_metadata.hpp"
#include "tests/tools/kiln_process.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::cache::DiskStore;
using kiln::cache::Key;
using kiln::testing::Result;
using kiln::testing::run_kiln_with;
using kiln::testing::TempDir;

// update_theta_and_exner on 6 x 4 zeros; rd_o_cvd = 0.4 is compiled in.
constexpr const char* kSpec = "horizontal_start=0,horizontal_end=6,vertical_start=0,vertical_end=4,rd_o_cvd=0.4";
// The specialised constants as the code generator writes them (0.4 exactly, as a hexadecimal literal).
constexpr const char* kRdOCvd = "constexpr double rd_o_cvd = (0x1.999999999999ap-2);";
constexpr const char* kHorizontalEnd = "constexpr kiln::index_t horizontal_end = static_cast<kiln::index_t>(6LL);";

bool has(const Result& result, const std::string& text) { return result.output.find(text) != std::string::npos; }

class CacheShow : public ::testing::Test {
 protected:
  TempDir dir;
  fs::path cache = dir.path() / "cache";

  // Caches update_theta_and_exner (specialised, or generic) with `kiln run`.
  void run_theta(bool generic = false) {
    const std::string args = std::string("run update_theta_and_exner --spec ") + kSpec +
                             " --shape theta_v=6x4 --shape exner=6x4 --shape area=6 --shape z_temp=6x4 --out '" +
                             (dir.path() / "out").string() + "'" + (generic ? " --generic" : "");
    const Result run = run_kiln_with(cache, args);
    ASSERT_TRUE(run.exited && run.status == 0) << run.output;
  }

  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const auto& entry : DiskStore(cache).list()) out.push_back(entry.key);
    return out;
  }

  Key only_key() const {
    const std::vector<Key> all = keys();
    EXPECT_EQ(all.size(), 1U);
    return all.empty() ? Key{} : all.front();
  }

  Result show(const std::string& args) { return run_kiln_with(cache, "cache show " + args); }
};

TEST_F(CacheShow, ShowsTheTranslationUnitOfACachedEntryByAPrefixOfItsKey) {
  run_theta();
  const std::string key = only_key().hex();
  const Result shown = show(key.substr(0, 6));
  ASSERT_TRUE(shown.exited && shown.status == 0) << shown.output;
  EXPECT_TRUE(has(shown, "key:             " + key)) << shown.output;
  EXPECT_TRUE(has(shown, "kernel:          update_theta_and_exner\n")) << shown.output;
  EXPECT_TRUE(has(shown, "mode:            specialised\n")) << shown.output;
  EXPECT_TRUE(has(shown, "\"rd_o_cvd\":0.4")) << shown.output;
  EXPECT_TRUE(has(shown, "options:         -O3 -ffp-contract=on -march=native\n")) << shown.output;
  EXPECT_TRUE(has(shown, "compiler:        clang 19")) << shown.output;
  EXPECT_TRUE(has(shown, "its key is the entry's, so this is the text the entry was compiled from")) << shown.output;
  EXPECT_TRUE(has(shown, kRdOCvd)) << shown.output;
  EXPECT_TRUE(has(shown, kHorizontalEnd)) << shown.output;
  EXPECT_TRUE(has(shown, "extern \"C\"")) << shown.output;

  // --source: the translation unit alone, as it would be given to a compiler.
  const Result source = show(key + " --source");
  ASSERT_TRUE(source.exited && source.status == 0) << source.output;
  EXPECT_FALSE(has(source, "key:")) << source.output;
  EXPECT_TRUE(has(source, kRdOCvd)) << source.output;
  EXPECT_TRUE(has(source, "#line ")) << source.output;
}

TEST_F(CacheShow, ShowsAnEntryByKernelAndValues) {
  run_theta(/*generic=*/true);
  const Result shown = show(std::string("--kernel update_theta_and_exner --generic --spec ") +
                            "'{\"horizontal_start\": 0, \"horizontal_end\": 6, \"vertical_start\": 0, "
                            "\"vertical_end\": 4, \"rd_o_cvd\": 0.4}'");
  ASSERT_TRUE(shown.exited && shown.status == 0) << shown.output;
  EXPECT_TRUE(has(shown, "key:             " + only_key().hex())) << shown.output;
  EXPECT_TRUE(has(shown, "mode:            generic\n")) << shown.output;
  EXPECT_TRUE(has(shown, "its key is the entry's")) << shown.output;
  // Generic: the values are read from the parameter block, not compiled in.
  EXPECT_TRUE(has(shown, "const double rd_o_cvd = static_cast<double>(kiln_params[")) << shown.output;
  EXPECT_FALSE(has(shown, kRdOCvd)) << shown.output;

  // Values nothing has compiled: no entry, the key named.
  const Result missing = show("--kernel update_theta_and_exner --spec '{\"horizontal_start\": 0, \"horizontal_end\": 7, "
                              "\"vertical_start\": 0, \"vertical_end\": 4, \"rd_o_cvd\": 0.4}'");
  ASSERT_TRUE(missing.exited) << missing.output;
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_TRUE(has(missing, "kiln cache show: no entry for kernel 'update_theta_and_exner' with these values"))
      << missing.output;
}

TEST_F(CacheShow, UnknownMalformedOrAmbiguousKeysFailSayingSo) {
  run_theta();
  const std::string key = only_key().hex();
  const std::string other = key.substr(0, 2) == "00" ? "11" : "00";
  const Result unknown = show(other + key.substr(2, 6));
  ASSERT_TRUE(unknown.exited) << unknown.output;
  EXPECT_EQ(unknown.status, 1) << unknown.output;
  EXPECT_TRUE(has(unknown, "kiln cache show: no entry's key starts with '" + other + key.substr(2, 6) + "' in " +
                               cache.string()))
      << unknown.output;

  const Result malformed = show("not-a-key");
  EXPECT_EQ(malformed.status, 1) << malformed.output;
  EXPECT_TRUE(has(malformed, "kiln cache show: 'not-a-key' is not a key")) << malformed.output;

  const Result neither = show("");
  EXPECT_EQ(neither.status, 1) << neither.output;
  EXPECT_TRUE(has(neither, "give a KEY")) << neither.output;

  // A second file under a name that shares the first 8 digits.
  std::string twin = key;
  twin.back() = twin.back() == '0' ? '1' : '0';
  fs::copy_file(cache / key.substr(0, 2) / key.substr(2), cache / twin.substr(0, 2) / twin.substr(2));
  const Result ambiguous = show(key.substr(0, 8));
  EXPECT_EQ(ambiguous.status, 1) << ambiguous.output;
  EXPECT_TRUE(has(ambiguous, "kiln cache show: '" + key.substr(0, 8) + "' is ambiguous: 2 entries' keys start with it"))
      << ambiguous.output;
}

TEST_F(CacheShow, ACorruptEntryFailsNamingItAndStays) {
  run_theta();
  const std::string key = only_key().hex();
  const fs::path entry = cache / key.substr(0, 2) / key.substr(2);
  {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    char first = 0;
    file.read(&first, 1);
    first = static_cast<char>(first ^ 0x5a);
    file.seekp(0);
    file.write(&first, 1);
  }
  const Result shown = show(key);
  ASSERT_TRUE(shown.exited) << shown.output;
  EXPECT_EQ(shown.status, 1) << shown.output;
  EXPECT_TRUE(has(shown, "kiln cache show: " + entry.string() + ": payload checksum mismatch")) << shown.output;
  EXPECT_TRUE(fs::exists(entry)) << "show removed the bad entry";
}

// An entry built with KILN_GATHER=off records it: show names it in the
// options and regenerates the key with it though the environment no longer
// sets it (the key holds the choice).
TEST_F(CacheShow, AGatherChoiceIsRecordedAndKeysTheRegeneratedText) {
  ::setenv("KILN_GATHER", "off", 1);
  run_theta();
  ::unsetenv("KILN_GATHER");
  const std::string key = only_key().hex();
  const Result shown = show(key);
  ASSERT_TRUE(shown.exited && shown.status == 0) << shown.output;
  EXPECT_TRUE(has(shown, "options:         -O3 -ffp-contract=on -march=native gather=off\n")) << shown.output;
  EXPECT_TRUE(has(shown, "its key is the entry's, so this is the text the entry was compiled from")) << shown.output;
}

// An entry without "build" (as kilns before issue 22 wrote them) still loads
// (a run finds it and does not replace it) and still shows, its options
// said to be unrecorded and its text checked against its key as before.
TEST_F(CacheShow, AnEntryWithoutItsRecipeStillLoadsAndShows) {
  run_theta();
  const Key key = only_key();
  const DiskStore store(cache);
  const kiln::cache::LookupResult found = store.get(key);
  ASSERT_TRUE(found.payload.has_value());
  const auto metadata = store.read_metadata(key);
  ASSERT_TRUE(metadata.has_value() && metadata->has_value());
  ASSERT_TRUE(kiln::cache::decode_recipe((*metadata)->metadata).has_value()) << (*metadata)->metadata;
  const std::optional<kiln::cache::IndexRecord> record = kiln::cache::decode_metadata((*metadata)->metadata);
  ASSERT_TRUE(record.has_value());
  const std::string older = kiln::cache::encode_metadata(*record);
  ASSERT_TRUE(store.put(key, *found.payload, older).has_value());

  run_theta();
  const auto after = store.read_metadata(key);
  ASSERT_TRUE(after.has_value() && after->has_value());
  EXPECT_EQ((*after)->metadata, older) << "the older entry was rebuilt instead of loaded";

  const Result shown = show(key.hex());
  ASSERT_TRUE(shown.exited && shown.status == 0) << shown.output;
  EXPECT_TRUE(has(shown, "options:         not recorded")) << shown.output;
  EXPECT_TRUE(has(shown, "its key is the entry's")) << shown.output;
  EXPECT_TRUE(has(shown, kRdOCvd)) << shown.output;
}

}  // namespace
