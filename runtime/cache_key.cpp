#include "runtime/cache_key.hpp"

namespace kiln::runtime {

std::string_view codegen_identity() { return KILN_CODEGEN_DIGEST; }

cache::Key compute_key(const KeyInputs& in) {
  cache::KeyBuilder builder;
  builder.add("format_version", in.format_version)
      .add("backend", in.backend)
      .add("triple", in.triple)
      .add("cpu", in.cpu)
      .add("features", in.features)
      .add("toolchain", in.toolchain)
      .add("flags", in.flags)
      .add("mode", in.mode)
      .add("prelude", in.prelude)
      .add("kernel_source", in.kernel_source)
      .add("specialisation", in.specialisation)
      .add("codegen", in.codegen);
  return builder.finish();
}

}  // namespace kiln::runtime
