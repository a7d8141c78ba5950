// Config::from_env: the KILN_* variables, read in one place.
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cache/byte_size.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "runtime/config/compile_options.hpp"

namespace kiln {
namespace {

// The bounds of each KILN_* count and the log levels: from_env() and
// Config::validate() (a Config set in code: the C and Fortran setters) hold the same.
constexpr unsigned kMaxBuildThreads = 256, kMaxBuildSlots = 4096, kMaxThreads = Config::kMaxThreads;
constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
constexpr std::string_view kLogLevelChoices = "trace, debug, info, warn, error, critical or off";
constexpr double kMaxSeconds = 1e6;

bool is_log_level(std::string_view level) {
  return std::find(std::begin(kLogLevels), std::end(kLogLevels), level) != std::end(kLogLevels);
}

// Every KILN_* value is read by one rule (docs/manual/configuration.md): unset
// or empty means the default; otherwise the value must match its grammar
// exactly, with no blanks around it (or around the parts of a list), and a
// value that does not stops from_env() with an Error naming the variable,
// the value and what is expected.
[[noreturn]] void bad_value(const char* name, std::string_view value, std::string_view expected) {
  throw Error(std::string("kiln: ") + name + "='" + std::string(value) + "': expected " + std::string(expected));
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

bool has_blank_around(std::string_view text) {
  return !text.empty() && (is_blank(text.front()) || is_blank(text.back()));
}

// Decimal digits, at least one.
bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits with an optional fraction: "30", "0.5". No sign, exponent, hex, inf or nan.
bool is_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return all_digits(text);
  return all_digits(text.substr(0, dot)) && all_digits(text.substr(dot + 1));
}

// A path: anything but blanks around it (a stray space from a shell script
// would name another folder).
const char* env_path(const char* name) {
  const char* value = env(name);
  if (value && has_blank_around(value)) bad_value(name, value, "a path with no blanks around it");
  return value;
}

bool env_flag(const char* name, bool fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::string_view v = value;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  bad_value(name, v, "1/0, true/false, yes/no or on/off");
}

std::filesystem::path default_cache_dir() {
  if (const char* dir = env_path("KILN_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "kiln";
  if (const char* home = env("HOME")) return std::filesystem::path(home) / ".cache" / "kiln";
  throw Error("kiln: no cache folder: set KILN_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)");
}

// Seconds, fractions allowed: "30", "0.5".
std::chrono::milliseconds env_seconds(const char* name, std::chrono::milliseconds fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  constexpr std::string_view expected = "a number of seconds from 0 to 1000000 (decimal digits, a fraction allowed: 30, 0.5)";
  const std::string_view text = value;
  double seconds = -1;
  if (!is_decimal(text) || std::from_chars(text.data(), text.data() + text.size(), seconds).ptr != text.end() ||
      !(seconds >= 0 && seconds <= kMaxSeconds)) {
    bad_value(name, text, expected);
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

// "a:b:c" -> {a, b, c}; empty parts are skipped, parts with blanks around them refused.
std::vector<std::filesystem::path> env_paths(const char* name) {
  std::vector<std::filesystem::path> paths;
  const char* value = env(name);
  if (!value) return paths;
  std::string_view rest = value;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view part = rest.substr(0, colon);
    if (has_blank_around(part)) bad_value(name, value, "':'-separated paths with no blanks around them");
    if (!part.empty()) paths.emplace_back(part);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return paths;
}

// cache::parse_byte_size's rule is this file's: decimal digits, a fraction
// allowed, then the unit's letters only (gc --max-size takes the same).
std::uint64_t env_bytes(const char* name, std::uint64_t fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::string_view text = value;
  const std::optional<std::uint64_t> bytes = cache::parse_byte_size(text);  // its rule is the strict one
  if (!bytes) {
    bad_value(name, text,
              "a size: decimal digits, a fraction allowed, then K, M, G or T (powers of 1024, B or iB after them "
              "allowed), or bytes: 500M, 1.5G, 1048576");
  }
  return *bytes;
}

unsigned env_count(const char* name, unsigned fallback, unsigned max, unsigned min = 1) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::string_view text = value;
  unsigned long long count = 0;
  // from_chars leaves `count` alone past 64 bits (result_out_of_range): the
  // error code, not the value, says so (20 digits were taken as 0).
  const std::from_chars_result read = std::from_chars(text.data(), text.data() + text.size(), count);
  if (!all_digits(text) || read.ec != std::errc() || read.ptr != text.end() || count < min || count > max) {
    bad_value(name, text,
              "a whole number from " + std::to_string(min) + " to " + std::to_string(max) + " (decimal digits only)");
  }
  return static_cast<unsigned>(count);
}

// The levels docs/manual/configuration.md lists, exactly.
std::string env_log_level(const char* name, std::string fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  if (!is_log_level(value)) bad_value(name, value, kLogLevelChoices);
  return value;
}

// One of `choices`, exactly.
template <std::size_t N>
std::string env_choice(const char* name, std::string fallback, const std::array<std::string_view, N>& choices) {
  const char* value = env(name);
  if (!value) return fallback;
  if (std::find(choices.begin(), choices.end(), std::string_view(value)) != choices.end()) return value;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(choices[i]);
  bad_value(name, value, expected);
}

}  // namespace

Config Config::from_env() {
  Config config;
  config.cache_dir = default_cache_dir();
  // Read where they are used (jit/compiler_module.cpp), held to the same rule here.
  for (const char* elsewhere : {"KILN_COMPILER_MODULE", "KILN_CLANG_RESOURCE_DIR"}) (void)env_path(elsewhere);
  if (const char* index = env_path("KILN_INDEX_PATH")) config.index_path = index;
  config.use_disk_cache = !env_flag("KILN_CACHE_DISABLE", false);
  config.print_metrics = env_flag("KILN_METRICS", false);
  if (const char* file = env_path("KILN_METRICS_FILE")) config.metrics_file = file;
  config.time_calls = config.print_metrics || !config.metrics_file.empty();
  config.log_level = env_log_level("KILN_LOG_LEVEL", config.log_level);
  config.lock_timeout = env_seconds("KILN_LOCK_TIMEOUT", config.lock_timeout);
  config.read_only_tiers = env_paths("KILN_CACHE_PATH");
  config.trusted_dirs = env_paths("KILN_TRUSTED_DIRS");
  config.cache_max_size = env_bytes("KILN_CACHE_MAX_SIZE", config.cache_max_size);
  config.build_threads = env_count("KILN_BUILD_THREADS", config.build_threads, kMaxBuildThreads);
  if (env("KILN_BUILD_SLOTS")) config.build_slots = env_count("KILN_BUILD_SLOTS", 0, kMaxBuildSlots, 0);
  config.compile_timeout = env_seconds("KILN_COMPILE_TIMEOUT", config.compile_timeout);
  config.compile_memory = env_bytes("KILN_COMPILE_MEMORY", config.compile_memory);
  config.opt_level = env_choice("KILN_OPT_LEVEL", config.opt_level, runtime::kOptLevels);
  config.fp_contract = env_choice("KILN_FP_CONTRACT", config.fp_contract, runtime::kFpContracts);
  config.check = env_flag("KILN_CHECK", config.check);
  config.tiered = env_flag("KILN_TIERED", config.tiered);
  config.tiered_opt_level = env_choice("KILN_TIERED_OPT_LEVEL", config.tiered_opt_level, runtime::kOptLevels);
  if (env("KILN_THREADS")) config.threads = static_cast<int>(env_count("KILN_THREADS", 0, kMaxThreads, 1));
  if (const char* cpu = env("KILN_TARGET_CPU")) {
    if (!runtime::is_target_cpu(cpu)) bad_value("KILN_TARGET_CPU", cpu, runtime::kTargetCpuChoices);
    config.target_cpu = cpu;
  }
  config.gather = env_choice("KILN_GATHER", config.gather, runtime::kGathers);
  return config;
}

void Config::validate() const {
  const auto refuse = [](const char* field, const std::string& value, const char* variable, const std::string& expected) {
    throw Error(std::string("kiln: Config::") + field + " " + value + ": expected " + expected + " (as " + variable +
                " takes it)");
  };
  const auto count = [](unsigned max) { return "0 (the default) to " + std::to_string(max); };
  if (!is_log_level(log_level)) refuse("log_level", "'" + log_level + "'", "KILN_LOG_LEVEL", std::string(kLogLevelChoices));
  if (build_threads > kMaxBuildThreads)
    refuse("build_threads", std::to_string(build_threads), "KILN_BUILD_THREADS", count(kMaxBuildThreads));
  if (build_slots && *build_slots > kMaxBuildSlots)
    refuse("build_slots", std::to_string(*build_slots), "KILN_BUILD_SLOTS", "0 (no limit) to " + std::to_string(kMaxBuildSlots));
  if (threads < 0 || threads > static_cast<int>(kMaxThreads))
    refuse("threads", std::to_string(threads), "KILN_THREADS", count(kMaxThreads));
  const auto seconds = [&](const char* field, std::chrono::milliseconds value, const char* variable) {
    if (value.count() < 0 || value.count() > static_cast<std::int64_t>(kMaxSeconds * 1000))
      refuse(field, std::to_string(value.count()) + " ms", variable, "0 to 1000000 seconds");
  };
  seconds("lock_timeout", lock_timeout, "KILN_LOCK_TIMEOUT");
  seconds("compile_timeout", compile_timeout, "KILN_COMPILE_TIMEOUT");
  if (!runtime::is_target_cpu(target_cpu))
    refuse("target_cpu", "'" + target_cpu + "'", "KILN_TARGET_CPU", runtime::kTargetCpuChoices);
  if (std::find(runtime::kGathers.begin(), runtime::kGathers.end(), gather) == runtime::kGathers.end())
    refuse("gather", "'" + gather + "'", "KILN_GATHER", "auto, on or off");
}

}  // namespace kiln
