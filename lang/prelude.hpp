// The kernel prelude: the text every generated translation unit starts with
// (views, loops, neighbour reductions, math), embedded into libkiln at build
// time from its parts in lang/prelude/ (lang/embed_prelude.cmake).
#pragma once

#include <string_view>

namespace kiln::lang {

// The whole prelude, its parts concatenated in order.
std::string_view prelude();

}  // namespace kiln::lang
