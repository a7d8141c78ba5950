#include "runtime/kernels/cache_key.hpp"

#include "lang/identity.hpp"
#include "lang/prelude.hpp"

namespace kiln::runtime {

std::string_view codegen_identity() { return lang::codegen_digest(); }

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

std::string text_digest(std::string_view text) { return cache::KeyBuilder().add("text", text).finish().hex(); }

std::string_view prelude_digest() {
  static const std::string digest = text_digest(lang::prelude());
  return digest;
}

}  // namespace kiln::runtime
