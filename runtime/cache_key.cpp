#include "runtime/cache_key.hpp"

namespace kiln::runtime {

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
      .add("translation_unit", in.translation_unit);
  return builder.finish();
}

}  // namespace kiln::runtime
