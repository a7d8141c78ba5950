// The one "kiln" logger: the cache, the jit layer and the runtime all log
// through it. Made on first use: on stderr, at the level a Runtime set for
// kiln's loggers (KILN_LOG_LEVEL, through spdlog::set_level) or else spdlog's
// default, info. A warm run logs nothing, and so never makes it (~15 µs of its
// start-up).
#pragma once

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kiln::base {

inline spdlog::logger& log() {
  if (auto logger = spdlog::get("kiln")) return *logger;  // the registry keeps it alive
  try {
    return *spdlog::stderr_color_mt("kiln");
  } catch (const spdlog::spdlog_ex&) {
    return *spdlog::get("kiln");  // another thread made it first
  }
}

}  // namespace kiln::base
