// The kernels of kernels_src/, embedded into libkiln at build time
// (the prelude is lang/prelude.hpp) (cmake/embed_sources.cmake writes the definitions).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace kiln::kernels_src {

struct EmbeddedFile {
  std::string_view name;  // file name, e.g. "stencil7.kiln"
  std::string_view text;
};

std::span<const EmbeddedFile> kernels();

}  // namespace kiln::kernels_src
