#include "kiln/version.hpp"

#include <exception>

#include "jit/hiprtc.hpp"
#include "jit/nvrtc.hpp"

namespace kiln {

VersionInfo version() {
  VersionInfo out;
  out.kiln = KILN_VERSION;
  out.llvm = KILN_LLVM_VERSION;
  try {
    const jit::Nvrtc& nvrtc = jit::Nvrtc::get();
    out.nvrtc_found = true;
    out.nvrtc = nvrtc.version() + " (" + nvrtc.library() + ")";
  } catch (const std::exception& e) {
    out.nvrtc = e.what();
  }
  try {
    const jit::Hiprtc& hiprtc = jit::Hiprtc::get();
    out.hiprtc_found = true;
    out.hiprtc = hiprtc.identity();
  } catch (const std::exception& e) {
    out.hiprtc = e.what();
  }
  return out;
}

}  // namespace kiln
