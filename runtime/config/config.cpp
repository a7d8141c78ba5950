// Config::from_env: the KILN_* variables, read in one place.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/byte_size.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool env_flag(const char* name, bool fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::string v = value;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw Error(std::string("kiln: ") + name + "='" + v + "': expected 1/0, true/false, yes/no or on/off");
}

std::filesystem::path default_cache_dir() {
  if (const char* dir = env("KILN_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "kiln";
  if (const char* home = env("HOME")) return std::filesystem::path(home) / ".cache" / "kiln";
  throw Error("kiln: no cache folder: set KILN_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)");
}

// Seconds, fractions allowed: "30", "0.5".
std::chrono::milliseconds env_seconds(const char* name, std::chrono::milliseconds fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(seconds >= 0) || seconds > 1e6) {
    throw Error(std::string("kiln: ") + name + "='" + value + "': expected a number of seconds (0 to 1000000)");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

// "a:b:c" -> {a, b, c}; empty parts are skipped.
std::vector<std::filesystem::path> env_paths(const char* name) {
  std::vector<std::filesystem::path> paths;
  const char* value = env(name);
  if (!value) return paths;
  std::string_view rest = value;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view part = rest.substr(0, colon);
    if (!part.empty()) paths.emplace_back(part);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return paths;
}

std::uint64_t env_bytes(const char* name, std::uint64_t fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::optional<std::uint64_t> bytes = cache::parse_byte_size(value);
  if (!bytes) throw Error(std::string("kiln: ") + name + "='" + value + "': expected a size such as 500M, 2G or 1048576");
  return *bytes;
}

unsigned env_count(const char* name, unsigned fallback, unsigned max, unsigned min = 1) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const long count = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || count < static_cast<long>(min) || count > static_cast<long>(max)) {
    throw Error(std::string("kiln: ") + name + "='" + value + "': expected a whole number from " +
                std::to_string(min) + " to " + std::to_string(max));
  }
  return static_cast<unsigned>(count);
}

}  // namespace

Config Config::from_env() {
  Config config;
  config.cache_dir = default_cache_dir();
  if (const char* index = env("KILN_INDEX_PATH")) config.index_path = index;
  config.use_disk_cache = !env_flag("KILN_CACHE_DISABLE", false);
  config.print_metrics = env_flag("KILN_METRICS", false);
  if (const char* file = env("KILN_METRICS_FILE")) config.metrics_file = file;
  config.time_calls = config.print_metrics || !config.metrics_file.empty();
  if (const char* level = env("KILN_LOG_LEVEL")) config.log_level = level;
  config.lock_timeout = env_seconds("KILN_LOCK_TIMEOUT", config.lock_timeout);
  config.read_only_tiers = env_paths("KILN_CACHE_PATH");
  config.trusted_dirs = env_paths("KILN_TRUSTED_DIRS");
  config.cache_max_size = env_bytes("KILN_CACHE_MAX_SIZE", config.cache_max_size);
  config.build_threads = env_count("KILN_BUILD_THREADS", config.build_threads, 256);
  if (env("KILN_BUILD_SLOTS")) config.build_slots = env_count("KILN_BUILD_SLOTS", 0, 4096, 0);
  return config;
}

}  // namespace kiln
