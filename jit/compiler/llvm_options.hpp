// The LLVM options kiln compiles with, beyond clang's flags. LLVM keeps them
// in process-wide globals (cl::opt), and lld resets every one of them to its
// default at each link: so they are set again after each link, and a compile
// and a link never overlap (a compile reads them while it generates code,
// and must not see them half reset: two builds of one key give one binary).
//
// -disable-lsr on x86-64: loop strength reduction took ~13 of the ~39 ms of a
// stencil7 compile, and leaving it out changed no granule kernel's run time
// beyond noise there (x86's addressing modes do much of what it does; on
// other targets it stays).
#pragma once

#include <shared_mutex>
#include <string>

namespace kiln::jit::compiler {

// The options, for the compiler's identity: "" when there are none.
std::string llvm_options_text();

// Held shared by a compile, exclusively by a link (which then sets the
// options again, see reapply_llvm_options).
std::shared_mutex& llvm_options_mutex();

// Sets the options; the caller holds llvm_options_mutex() exclusively.
void reapply_llvm_options();

}  // namespace kiln::jit::compiler
