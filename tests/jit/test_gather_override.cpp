// Config::gather, KILN_GATHER (docs/manual/configuration.md), through the
// public API: each choice is in the cache key (a Runtime made with another
// one misses the binaries of the first), a gather kernel gives the same bits
// with gathers and with scalar loads, the variable reaches the field through
// Config::from_env, and a value other than auto, on or off is refused naming
// the variable (from_env) or the field (a Config set in code).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/support/temp_dir.hpp"

namespace kiln::testing {
namespace {

// Sets KILN_GATHER for one scope (unset: removed), and puts back what was there.
class GatherSetting {
 public:
  explicit GatherSetting(std::optional<std::string> value) {
    if (const char* old = std::getenv("KILN_GATHER")) old_ = old;
    if (value) ::setenv("KILN_GATHER", value->c_str(), 1);
    else ::unsetenv("KILN_GATHER");
  }
  ~GatherSetting() {
    if (old_) ::setenv("KILN_GATHER", old_->c_str(), 1);
    else ::unsetenv("KILN_GATHER");
  }
  GatherSetting(const GatherSetting&) = delete;
  GatherSetting& operator=(const GatherSetting&) = delete;

 private:
  std::optional<std::string> old_;
};

Config config_for(const std::filesystem::path& cache_dir, std::string gather = "auto") {
  Config config;
  config.cache_dir = cache_dir;
  config.log_level = "error";
  config.gather = std::move(gather);
  return config;
}

// temporary_fields_for_turbulence_diagnostics on a grid of `cells` cells and
// 3 * cells / 2 edges in ICON's layout (cells contiguous, levels next): each
// lane reads its own three edges through C2E, which AVX-512 can gather.
struct Grid {
  static constexpr std::int64_t cells = 1000, edges = 1500, levels = 7;
  std::vector<double> kh_smag_ec, vn, e_bln, geofac, multfac, kh_c, div;
  std::vector<std::int32_t> c2e;

  Grid() : kh_c(cells * levels, 0.0), div(cells * levels, 0.0), c2e(cells * 3) {
    std::mt19937_64 random(42);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    auto fill = [&](std::vector<double>& v, std::size_t n) {
      v.resize(n);
      for (double& x : v) x = value(random);
    };
    fill(kh_smag_ec, edges * levels);
    fill(vn, edges * levels);
    fill(e_bln, cells * 3);
    fill(geofac, cells * 3);
    fill(multfac, levels);
    std::uniform_int_distribution<std::int32_t> edge(0, edges - 1);
    for (std::int32_t& e : c2e) e = edge(random);
  }
  std::vector<kiln_arg> args() {
    return {f_array(kh_smag_ec.data(), {edges, levels}), f_array(vn.data(), {edges, levels}),
            f_array(e_bln.data(), {cells, 3}),           f_array(geofac.data(), {cells, 3}),
            c_array(multfac.data(), {levels}),           f_array(kh_c.data(), {cells, levels}),
            f_array(div.data(), {cells, levels}),        f_array(c2e.data(), {cells, 3})};
  }
  Spec spec() {
    const std::vector<kiln_arg> a = args();
    Spec s;
    s.set("horizontal_start", 0).set("horizontal_end", cells).set("vertical_start", 0).set("vertical_end", levels);
    const char* names[] = {"kh_smag_ec", "vn", "e_bln_c_s", "geofac_div", "diff_multfac_smag", "kh_c", "div", "C2E"};
    for (std::size_t i = 0; i < a.size(); ++i) s.strides_of(names[i], a[i]);
    return s;
  }
};

constexpr const char* kKernel = "temporary_fields_for_turbulence_diagnostics";

GeneratedSource source_with(const Config& config) {
  Runtime rt(config);
  Grid grid;
  return rt.generated_source(kKernel, grid.spec());
}

std::string key_with(std::string gather, const std::filesystem::path& cache) {
  return source_with(config_for(cache, std::move(gather))).key;
}

// KILN_GATHER as Config::from_env reads it, into a Config on `cache`.
Config config_from_env(std::optional<std::string> gather, const std::filesystem::path& cache) {
  const GatherSetting setting(std::move(gather));
  Config config = Config::from_env();
  config.cache_dir = cache;
  config.log_level = "error";
  return config;
}

TEST(GatherOverride, EachChoiceIsInTheKey) {
  TempDir dir;
  Config untouched;  // gather as Config has it by default
  untouched.cache_dir = dir.path();
  untouched.log_level = "error";
  const std::string by_default = source_with(untouched).key;
  EXPECT_EQ(key_with("auto", dir.path()), by_default) << "auto is the default: the CPU's tuning, already in the key";
  const std::string on = key_with("on", dir.path()), off = key_with("off", dir.path());
  EXPECT_NE(on, off);
  EXPECT_NE(on, by_default);
  EXPECT_NE(off, by_default);
  // The options Runtime::generated_source (and `kiln cache show`) print name the choice.
  EXPECT_NE(source_with(config_for(dir.path(), "off")).options.find(" gather=off"), std::string::npos);
  EXPECT_EQ(source_with(config_for(dir.path())).options.find("gather"), std::string::npos);
}

TEST(GatherOverride, TheVariableReachesTheFieldThroughFromEnv) {
  TempDir dir;
  EXPECT_EQ(config_from_env(std::nullopt, dir.path()).gather, "auto");
  EXPECT_EQ(config_from_env("", dir.path()).gather, "auto") << "empty is the default";
  for (const char* choice : {"auto", "on", "off"}) {
    const Config config = config_from_env(std::string(choice), dir.path());
    EXPECT_EQ(config.gather, choice);
    EXPECT_EQ(source_with(config).key, key_with(choice, dir.path())) << choice;
  }
}

// The outputs, and how many kernels the Runtime compiled for them.
std::pair<std::vector<double>, std::uint64_t> run_with(std::string gather, const std::filesystem::path& cache) {
  Runtime rt(config_for(cache, std::move(gather)));
  Grid grid;
  const std::vector<kiln_arg> args = grid.args();
  rt.kernel(kKernel, grid.spec()).invoke(std::span<const kiln_arg>(args));
  std::vector<double> out = grid.kh_c;
  out.insert(out.end(), grid.div.begin(), grid.div.end());
  return {out, rt.metrics().total().compiles};
}

TEST(GatherOverride, GathersAndScalarLoadsGiveTheSameBits) {
  TempDir dir;
  const auto [scalar, scalar_compiles] = run_with("off", dir.path());
  const auto [gathers, gather_compiles] = run_with("on", dir.path());
  const auto [by_default, default_compiles] = run_with("auto", dir.path());
  EXPECT_EQ(scalar_compiles, 1u);
  EXPECT_EQ(gather_compiles, 1u) << "KILN_GATHER=on found KILN_GATHER=off's binary";
  EXPECT_EQ(default_compiles, 1u) << "the default found an explicit choice's binary";
  ASSERT_EQ(scalar.size(), gathers.size());
  bool any_nonzero = false;
  for (std::size_t i = 0; i < scalar.size(); ++i) {
    // Bit for bit: memcmp-equal doubles (no tolerance).
    ASSERT_EQ(std::memcmp(&scalar[i], &gathers[i], sizeof(double)), 0) << "at " << i << ": " << scalar[i] << " "
                                                                        << gathers[i];
    ASSERT_EQ(std::memcmp(&scalar[i], &by_default[i], sizeof(double)), 0) << "at " << i;
    any_nonzero = any_nonzero || scalar[i] != 0.0;
  }
  EXPECT_TRUE(any_nonzero) << "the kernel wrote nothing";
}

TEST(GatherOverride, AnotherValueIsRefusedNamingTheVariable) {
  TempDir dir;
  for (const char* bad : {"yes", "ON", " on", "1"}) {
    try {
      (void)config_from_env(std::string(bad), dir.path());
      ADD_FAILURE() << "KILN_GATHER='" << bad << "' was taken";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("KILN_GATHER='" + std::string(bad) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("auto, on or off"), std::string::npos) << what;
    }
  }
}

TEST(GatherOverride, AnotherValueSetInCodeIsRefusedNamingTheField) {
  TempDir dir;
  for (const char* bad : {"yes", "ON", "", "1"}) {
    const Config config = config_for(dir.path(), bad);
    try {
      config.validate();
      ADD_FAILURE() << "Config::gather '" << bad << "' passed validate()";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Config::gather '" + std::string(bad) + "': expected auto, on or off"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(Runtime rt(config), Error) << bad;
  }
}

}  // namespace
}  // namespace kiln::testing
