// Config::from_env: every KILN_* variable read, and a bad value named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "runtime/config/compile_options.hpp"

namespace kiln {
namespace {

// Sets the variables for one test and unsets them after.
class ConfigEnv : public ::testing::Test {
 protected:
  void set(const char* name, const char* value) {
    ::setenv(name, value, 1);
    names_.push_back(name);
  }
  void TearDown() override {
    for (const char* name : names_) ::unsetenv(name);
  }
  std::string error_of_from_env() {
    try {
      Config::from_env();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

 private:
  std::vector<const char*> names_;
};

TEST_F(ConfigEnv, ReadsTheCacheAndBuildVariables) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  set("KILN_CACHE_PATH", "/opt/app/kiln::/srv/kiln:");
  set("KILN_TRUSTED_DIRS", "/srv/kiln");
  set("KILN_CACHE_MAX_SIZE", "1.5G");
  set("KILN_LOCK_TIMEOUT", "2.5");
  set("KILN_BUILD_THREADS", "3");
  set("KILN_BUILD_SLOTS", "0");
  const Config c = Config::from_env();
  EXPECT_EQ(c.cache_dir, "/tmp/kiln-config-test");
  EXPECT_EQ(c.read_only_tiers, (std::vector<std::filesystem::path>{"/opt/app/kiln", "/srv/kiln"}));
  EXPECT_EQ(c.trusted_dirs, (std::vector<std::filesystem::path>{"/srv/kiln"}));
  EXPECT_EQ(c.cache_max_size, 1536ull * 1024 * 1024);
  EXPECT_EQ(c.lock_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.build_threads, 3u);
  EXPECT_EQ(c.build_slots, 0u);  // set to 0: no limit, unlike unset
}

TEST_F(ConfigEnv, UnsetBuildVariablesKeepTheirDefaults) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  const Config c = Config::from_env();
  EXPECT_TRUE(c.read_only_tiers.empty());
  EXPECT_EQ(c.cache_max_size, 0u);
  EXPECT_EQ(c.lock_timeout, std::chrono::seconds(60));
  EXPECT_EQ(c.build_threads, 0u);  // the Runtime picks the hardware's
  EXPECT_FALSE(c.build_slots.has_value());
}

TEST_F(ConfigEnv, ThreadsAreReadAndBounded) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  EXPECT_EQ(Config::from_env().threads, 0);  // OpenMP's count, or 1 (runtime/call/threads.hpp)
  set("KILN_THREADS", "6");
  EXPECT_EQ(Config::from_env().threads, 6);
  for (const char* bad : {"0", "-2", "two", "1025"}) {
    set("KILN_THREADS", bad);
    EXPECT_NE(error_of_from_env().find(std::string("KILN_THREADS='") + bad + "'"), std::string::npos) << bad;
  }
}

// Check mode: off by default, KILN_CHECK=1 on; another source, so another key.
TEST_F(ConfigEnv, CheckModeIsReadAndInTheKey) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  EXPECT_FALSE(Config::from_env().check);
  const std::string plain = runtime::compile_options(Config::from_env()).key;
  set("KILN_CHECK", "1");
  const Config checked = Config::from_env();
  EXPECT_TRUE(checked.check);
  EXPECT_NE(runtime::compile_options(checked).key, plain);
  EXPECT_TRUE(runtime::compile_options(checked).check);
}

// Gathers on a host whose kernel reports the microcode mitigation of Gather
// Data Sampling (Downfall): "auto" for this host's CPU builds as "off" (far
// slower gathers than scalar loads there); anything named is built as named,
// and a cache for another CPU keeps LLVM's choice.
TEST(GatherAsBuilt, AutoForThisHostIsOffWhereTheMicrocodeSlowsGathers) {
  using runtime::gather_as_built;
  EXPECT_EQ(gather_as_built("auto", "native", "Mitigation: Microcode"), "off");
  EXPECT_EQ(gather_as_built("auto", "native", "Not affected"), "auto");
  EXPECT_EQ(gather_as_built("auto", "native", "Vulnerable"), "auto");  // mitigation off: gathers fast
  EXPECT_EQ(gather_as_built("auto", "native", "Mitigation: AVX disabled, no microcode"), "auto");
  EXPECT_EQ(gather_as_built("auto", "native", ""), "auto");  // no report: not an affected x86 host
  EXPECT_EQ(gather_as_built("auto", "x86-64-v3", "Mitigation: Microcode"), "auto");
  EXPECT_EQ(gather_as_built("on", "native", "Mitigation: Microcode"), "on");
  EXPECT_EQ(gather_as_built("off", "native", "Not affected"), "off");
}

// The options, their key and the recorded recipe take the choice as built.
TEST(GatherAsBuilt, CompileOptionsTakeTheChoiceAsBuilt) {
  Config config;
  const runtime::CompileOptions options = runtime::compile_options(config);
  EXPECT_EQ(options.gather, runtime::gather_as_built(config));
  EXPECT_EQ(options.features.empty(), options.gather == "auto");
  config.target_cpu = "x86-64-v3";
  EXPECT_EQ(runtime::compile_options(config).gather, "auto");
  EXPECT_EQ(runtime::compile_options(config).features, "");
  config.gather = "off";
  EXPECT_EQ(runtime::compile_options(config).features, "+prefer-no-gather");
}

TEST_F(ConfigEnv, BadValuesAreNamed) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  const std::pair<const char*, const char*> cases[] = {
      {"KILN_LOCK_TIMEOUT", "soon"}, {"KILN_LOCK_TIMEOUT", "-1"},  {"KILN_CACHE_MAX_SIZE", "12x"},
      {"KILN_BUILD_THREADS", "0"},   {"KILN_BUILD_THREADS", "2a"}, {"KILN_BUILD_SLOTS", "-3"},
      {"KILN_OPT_LEVEL", "O9"},      {"KILN_OPT_LEVEL", "-O3"},    {"KILN_FP_CONTRACT", "maybe"},
      {"KILN_FP_CONTRACT", "OFF"},   {"KILN_CHECK", "maybe"},      {"KILN_GATHER", "yes"},
      {"KILN_GATHER", "OFF"}};
  for (const auto& [name, value] : cases) {
    set(name, value);
    const std::string what = error_of_from_env();
    EXPECT_NE(what.find(std::string(name) + "='" + value + "'"), std::string::npos) << name << ": " << what;
    ::unsetenv(name);
  }
}

// One rule for every variable (docs/manual/configuration.md): the value exactly,
// no blanks around it; whole numbers in decimal digits only; seconds and
// sizes decimal with an optional fraction. ' 5' and '5 ' alike are refused,
// as are 0x10, 1.5 for a whole number, and exponents.
TEST_F(ConfigEnv, EveryVariableIsReadStrictly) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  const std::pair<const char*, const char*> cases[] = {
      {"KILN_BUILD_THREADS", " 5"},        {"KILN_BUILD_THREADS", "5 "},      {"KILN_BUILD_THREADS", "0x10"},
      {"KILN_BUILD_THREADS", "1.5"},       {"KILN_BUILD_THREADS", "+5"},      {"KILN_BUILD_THREADS", "1e1"},
      {"KILN_BUILD_THREADS", "4294967297"}, {"KILN_BUILD_SLOTS", " 0"},        {"KILN_BUILD_SLOTS", "0x10"},
      {"KILN_LOCK_TIMEOUT", " 5"},         {"KILN_LOCK_TIMEOUT", "5 "},       {"KILN_LOCK_TIMEOUT", "0x10"},
      {"KILN_LOCK_TIMEOUT", "1e3"},        {"KILN_LOCK_TIMEOUT", "inf"},      {"KILN_LOCK_TIMEOUT", "nan"},
      {"KILN_LOCK_TIMEOUT", "+1"},         {"KILN_LOCK_TIMEOUT", ".5"},       {"KILN_LOCK_TIMEOUT", "5."},
      {"KILN_CACHE_MAX_SIZE", " 1G"},      {"KILN_CACHE_MAX_SIZE", "1G "},    {"KILN_CACHE_MAX_SIZE", "1e3"},
      {"KILN_CACHE_MAX_SIZE", "0x10"},     {"KILN_CACHE_MAX_SIZE", "inf"},    {"KILN_CACHE_MAX_SIZE", "-1G"},
      {"KILN_METRICS", " 1"},              {"KILN_METRICS", "1 "},            {"KILN_CACHE_DISABLE", "TRUE"},
      {"KILN_INDEX_PATH", "off "},         {"KILN_METRICS_FILE", "m.json "},  {"KILN_CACHE_PATH", "/a: /b"},
      {"KILN_TRUSTED_DIRS", "/a :/b"},     {"KILN_LOG_LEVEL", " warn"},       {"KILN_LOG_LEVEL", "verbose"},
      {"KILN_COMPILER_MODULE", " /x.so"},  {"KILN_CLANG_RESOURCE_DIR", "/x "}, {"KILN_GATHER", " on"},
      {"KILN_GATHER", "off "}};
  for (const auto& [name, value] : cases) {
    set(name, value);
    const std::string what = error_of_from_env();
    EXPECT_NE(what.find(std::string(name) + "='" + value + "': expected "), std::string::npos)
        << name << "='" << value << "' accepted, or not named: " << what;
    ::unsetenv(name);
  }
  set("KILN_CACHE_DIR", " /tmp/kiln-config-test");
  EXPECT_NE(error_of_from_env().find("KILN_CACHE_DIR=' /tmp/kiln-config-test': expected a path"), std::string::npos);
}

TEST_F(ConfigEnv, StrictValuesThatAreRightStillRead) {
  set("KILN_CACHE_DIR", "/tmp/kiln config test");  // blanks inside a path are the path's own
  set("KILN_BUILD_THREADS", "08");
  set("KILN_BUILD_SLOTS", "4096");
  set("KILN_LOCK_TIMEOUT", "0.25");
  set("KILN_CACHE_MAX_SIZE", "2GiB");
  set("KILN_LOG_LEVEL", "critical");
  set("KILN_INDEX_PATH", "off");
  set("KILN_METRICS", "");  // empty: as unset
  set("KILN_GATHER", "off");
  const Config c = Config::from_env();
  EXPECT_EQ(c.cache_dir, "/tmp/kiln config test");
  EXPECT_EQ(c.build_threads, 8u);
  EXPECT_EQ(c.build_slots, 4096u);
  EXPECT_EQ(c.lock_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(c.cache_max_size, 2ull << 30);
  EXPECT_EQ(c.log_level, "critical");
  EXPECT_EQ(c.index_path, "off");
  EXPECT_FALSE(c.print_metrics);
  EXPECT_EQ(c.gather, "off");
}

}  // namespace
}  // namespace kiln
