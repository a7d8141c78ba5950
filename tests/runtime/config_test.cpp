// Config::from_env: every KILN_* variable read, and a bad value named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

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

TEST_F(ConfigEnv, BadValuesAreNamed) {
  set("KILN_CACHE_DIR", "/tmp/kiln-config-test");
  const std::pair<const char*, const char*> cases[] = {
      {"KILN_LOCK_TIMEOUT", "soon"}, {"KILN_LOCK_TIMEOUT", "-1"},  {"KILN_CACHE_MAX_SIZE", "12x"},
      {"KILN_BUILD_THREADS", "0"},   {"KILN_BUILD_THREADS", "2a"}, {"KILN_BUILD_SLOTS", "-3"}};
  for (const auto& [name, value] : cases) {
    set(name, value);
    const std::string what = error_of_from_env();
    EXPECT_NE(what.find(std::string(name) + "='" + value + "'"), std::string::npos) << name << ": " << what;
    ::unsetenv(name);
  }
}

}  // namespace
}  // namespace kiln
