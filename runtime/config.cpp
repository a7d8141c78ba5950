// Config::from_env: the KILN_* variables, read in one place.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

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
  return config;
}

}  // namespace kiln
