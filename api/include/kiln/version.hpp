// What this kiln is built from and what it found on this machine, for
// `kiln --version` and bug reports.
#pragma once

#include <string>

#include "kiln/export.hpp"

namespace kiln {

struct VersionInfo {
  std::string kiln;  // "0.1.0"
  std::string llvm;  // the LLVM kiln's CPU compiler is built against, "19.1.4"
  // The GPU compilers, loaded with dlopen on first use: "found" says whether
  // one loaded here; `detail` is its version and library file, or why none did.
  bool nvrtc_found = false;
  std::string nvrtc;
  bool hiprtc_found = false;
  std::string hiprtc;
};

// Looks for NVRTC and hipRTC (dlopen; nothing else is loaded).
KILN_API VersionInfo version();

}  // namespace kiln
