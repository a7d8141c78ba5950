// kiln's compiler front end as the compile worker sets it up (clang's resource
// folder found, the native target registered), for the rows that compile in the
// bench's own process: the prelude rows (cold_compile.cpp) and the load rows
// (load_ways.cpp). Throws where the compiler cannot be set up.
#pragma once

#include <memory>

#include "jit/compiler/frontend.hpp"

namespace kiln_bench {

std::unique_ptr<kiln::jit::compiler::Frontend> new_frontend();

}  // namespace kiln_bench
