#include "kiln/version.hpp"

#include "jit/hiprtc.hpp"
#include "jit/nvrtc.hpp"

namespace kiln {

VersionInfo version() {
  VersionInfo out;
  out.kiln = KILN_VERSION;
  out.llvm = KILN_LLVM_VERSION;
  // A GPU compiler that is missing says why in its field (each library tried).
  if (const base::Result<const jit::Nvrtc*> nvrtc = jit::Nvrtc::get()) {
    out.nvrtc_found = true;
    out.nvrtc = (*nvrtc)->version() + " (" + (*nvrtc)->library() + ")";
  } else {
    out.nvrtc = nvrtc.error().message;
  }
  if (const base::Result<const jit::Hiprtc*> hiprtc = jit::Hiprtc::get()) {
    out.hiprtc_found = true;
    out.hiprtc = (*hiprtc)->identity();
  } else {
    out.hiprtc = hiprtc.error().message;
  }
  return out;
}

}  // namespace kiln
