// The jit layer logs through the shared "kiln" logger that the runtime registers
// (level from KILN_LOG_LEVEL); used alone (unit tests) it falls back to spdlog's default.
#pragma once

#include <spdlog/spdlog.h>

namespace kiln::jit {

inline spdlog::logger& log() {
  auto logger = spdlog::get("kiln");  // the registry keeps it alive
  return logger ? *logger : *spdlog::default_logger();
}

}  // namespace kiln::jit
