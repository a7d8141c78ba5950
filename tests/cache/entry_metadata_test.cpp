#include "cache/entry_metadata.hpp"

#include <random>

#include <gtest/gtest.h>

namespace kiln::cache {
namespace {

IndexRecord sample() {
  IndexRecord record;
  record.kernel = "update_theta_and_exner";
  record.specialisation = R"({"horizontal_start": 0, "note": "quote \" and \\ backslash"})";
  record.backend = "cpu";
  record.target = "x86_64-pc-linux-gnu znver4 +avx2,+fma";
  record.compile_ms = 41.75;
  return record;
}

TEST(EntryMetadata, RoundTripsTheRecordsFields) {
  const std::optional<IndexRecord> got = decode_metadata(encode_metadata(sample()));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kernel, sample().kernel);
  EXPECT_EQ(got->specialisation, sample().specialisation);
  EXPECT_EQ(got->backend, sample().backend);
  EXPECT_EQ(got->target, sample().target);
  EXPECT_EQ(got->compile_ms, sample().compile_ms);
}

// Key, size, times and hits come from the file, not from the metadata.
TEST(EntryMetadata, StoresOnlyTheDescriptiveFields) {
  IndexRecord record = sample();
  record.size = 777;
  record.hits = 5;
  record.created = 123456;
  const std::string text = encode_metadata(record);
  EXPECT_EQ(text.find("777"), std::string::npos) << text;
  EXPECT_EQ(text.find("123456"), std::string::npos) << text;
  const auto got = decode_metadata(text);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->size, 0U);
  EXPECT_EQ(got->hits, 0);
}

TEST(EntryMetadata, NonUtf8NamesEncodeWithoutThrowing) {
  IndexRecord record = sample();
  record.kernel = "bad\xff\xfe";
  std::string text;
  ASSERT_NO_THROW(text = encode_metadata(record));
  EXPECT_TRUE(decode_metadata(text).has_value()) << text;
}

// Issue 18: a user kernel's file and text digest travel with the entry (and
// so through the journal and a rebuild); an embedded kernel's metadata, with
// neither, is as it was, and older metadata without them still decodes.
TEST(EntryMetadata, CarriesAUserKernelsFileAndDigest) {
  IndexRecord record = sample();
  record.kernel_file = "/home/me/kernels/smooth.kiln";
  record.kernel_digest = "0123456789abcdef0123456789abcdef";
  const std::optional<IndexRecord> got = decode_metadata(encode_metadata(record));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kernel_file, record.kernel_file);
  EXPECT_EQ(got->kernel_digest, record.kernel_digest);
  const std::string embedded = encode_metadata(sample());
  EXPECT_EQ(embedded.find("kernel_file"), std::string::npos) << embedded;
  EXPECT_EQ(embedded.find("kernel_digest"), std::string::npos) << embedded;
  const auto older = decode_metadata(R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":3})");
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->kernel_file, "");
  EXPECT_FALSE(decode_metadata(
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":3,"kernel_digest":7})"));
}

// Issue 22: how the entry was built (kiln cache show regenerates its source
// from it) travels in the metadata only; the record decodes with or without
// it, and entries written before it have none.
TEST(EntryMetadata, CarriesTheBuildRecipe) {
  const BuildRecipe recipe{"O2", "off", "x86-64-v3", true, "clang 19.1.7; -std=c++20 -fPIC; lld 19.1.7; -shared"};
  const std::string text = encode_metadata(sample(), &recipe);
  EXPECT_EQ(decode_recipe(text), recipe) << text;
  const std::optional<IndexRecord> got = decode_metadata(text);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kernel, sample().kernel);
  EXPECT_EQ(got->compile_ms, sample().compile_ms);
  EXPECT_FALSE(decode_recipe(encode_metadata(sample())).has_value());
}

// Config::gather is recorded since it became a Config field; a "build"
// written before has none, and says so with an empty gather (not "auto":
// KILN_GATHER may have been on or off then).
TEST(EntryMetadata, CarriesTheGatherChoiceAndSaysWhenNotRecorded) {
  BuildRecipe recipe{"O3", "on", "native", false, "clang 19.1.7"};
  EXPECT_EQ(recipe.gather, "auto");
  recipe.gather = "off";
  const std::string text = encode_metadata(sample(), &recipe);
  EXPECT_NE(text.find(R"("gather":"off")"), std::string::npos) << text;
  EXPECT_EQ(decode_recipe(text), recipe) << text;
  const std::string record = R"("kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":3)";
  const std::string before = "{" + record +
                             R"(,"build":{"opt_level":"O3","fp_contract":"on","target_cpu":"native","check":false,)"
                             R"("compiler":"c"}})";
  const std::optional<BuildRecipe> old = decode_recipe(before);
  ASSERT_TRUE(old.has_value()) << before;
  EXPECT_EQ(old->gather, "");
  const std::string not_text = "{" + record +
                               R"(,"build":{"opt_level":"O3","fp_contract":"on","target_cpu":"native","check":false,)"
                               R"("compiler":"c","gather":1}})";
  EXPECT_FALSE(decode_recipe(not_text).has_value()) << not_text;
}

TEST(EntryMetadata, RejectsARecipeOfTheWrongShape) {
  const std::string record = R"("kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":3)";
  const char* bad[] = {
      R"("build":[])",
      R"("build":{"opt_level":"O3","fp_contract":"on","target_cpu":"native","check":false})",  // no compiler
      R"("build":{"opt_level":"O3","fp_contract":"on","target_cpu":"native","check":0,"compiler":"c"})",
      R"("build":{"opt_level":3,"fp_contract":"on","target_cpu":"native","check":false,"compiler":"c"})",
  };
  for (const char* build : bad) {
    const std::string text = "{" + record + "," + build + "}";
    EXPECT_FALSE(decode_recipe(text).has_value()) << text;
    EXPECT_TRUE(decode_metadata(text).has_value()) << text;  // the record is still whole
  }
  EXPECT_FALSE(decode_recipe("not json").has_value());
}

TEST(EntryMetadata, IgnoresUnknownFields) {
  const auto got = decode_metadata(
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":3,"later":[1,2]})");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->kernel, "k");
  EXPECT_EQ(got->compile_ms, 3.0);
}

TEST(EntryMetadata, RejectsWhatIsNotARecord) {
  const char* bad[] = {
      "",
      "not json",
      "[]",
      "\"a string\"",
      "{}",
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t"})",                   // no compile_ms
      R"({"kernel":1,"specialisation":"{}","backend":"cpu","target":"t","compile_ms":1})",      // kernel a number
      R"({"kernel":"k","specialisation":{},"backend":"cpu","target":"t","compile_ms":1})",     // object, not text
      R"({"kernel":"k","specialisation":"{}","backend":null,"target":"t","compile_ms":1})",    // null
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":"1"})", // a string
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":-1})",  // negative
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":1e999})",  // overflows
      R"({"kernel":"k","specialisation":"{}","backend":"cpu","target":"t","compile_ms":1} trailing)",
      R"({"kernel":"k")",
  };
  for (const char* text : bad) EXPECT_FALSE(decode_metadata(text).has_value()) << text;
}

// What the fuzzer does at length: random bytes and cut-off records never
// throw and never decode into a record by accident.
TEST(EntryMetadata, GarbageNeverThrows) {
  const std::string good = encode_metadata(sample());
  std::mt19937 rng(3);
  for (int round = 0; round < 2000; ++round) {
    std::string text = good.substr(0, rng() % good.size());
    if (round % 2 == 1) {
      text = good;
      text[rng() % text.size()] = static_cast<char>(rng());
    }
    EXPECT_NO_THROW(decode_metadata(text)) << text;
  }
  EXPECT_NO_THROW(decode_metadata(std::string(100000, '[')));
}

}  // namespace
}  // namespace kiln::cache
