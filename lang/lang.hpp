// The kernel language's one door (lang/README.md): what a front end or the
// runtime needs to read a kernel, bind a specialisation to it and generate
// its translation unit.
#pragma once

#include "lang/binder.hpp"        // bind_spec, BoundSpec, forget_values
#include "lang/codegen.hpp"       // generate_source, generate_gpu_source
#include "lang/declarations.hpp"  // KernelInfo and its parts
#include "lang/identity.hpp"      // codegen_digest
#include "lang/parser.hpp"        // parse_kernel_source
#include "lang/prelude.hpp"       // prelude
