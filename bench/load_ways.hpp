// kiln_bench's load rows (issue 22): one kernel's binary loaded, in the same
// run, the way kiln loads it warm and the two ways it could have:
//
//   load/direct_map        the lld-linked shared object, mapped by kiln's own
//                          mapper (jit/elf_image): open, read, check the ELF
//                          headers, plan, mmap, close. What a warm kiln does
//                          after verifying the cache entry (whose trailer and
//                          checksums are not part of this row: warm_start has them)
//   load/dlopen            the same .so: dlopen(RTLD_NOW | RTLD_LOCAL) + dlsym
//   load/orc_new_lljit     the kernel's relocatable object (the .o lld links
//                          into that .so, from the same compile): read, a new
//                          llvm::orc::LLJIT (LLJITBuilder::create), addObjectFile,
//                          lookup of the entry. What a process that loads its
//                          first kernel through ORC pays, LLVM already mapped and
//                          its native target initialised (neither is counted)
//   load/orc_same_lljit    the same object into one LLJIT made beforehand, a
//                          new JITDylib per kernel: each further kernel of a process
//   load/libllvm_per_process  what ORC costs once per process besides:
//                          mapping libLLVM (kiln_bench_llvm_process, a new
//                          process each time; its own dlopen time)
//   link/lld               the compile side: lld linking that object into the
//                          shared object (jit/compiler/linker), which a cold
//                          miss pays once and ORC replaces by its link at load
//
// Every load row loads a file it has not loaded before (a copy per
// iteration, made beforehand) and keeps it loaded until the row ends, as a
// program keeps its kernels. The kernel is compiled once, in this process,
// by kiln's own compiler code (jit/compiler/frontend, the module's), so the
// three loads get the object and the shared object of one compile; all three
// entries are called once and must compute the same values. Times are
// printed, never asserted.
#pragma once

#include <string>

namespace kiln_bench {

// Registers the rows for `translation_unit`, a kernel kiln's code generator
// wrote with the entry kAltSymbol (process_kernels.hpp) for
// process_spec(0)'s values, so the rows can call it on that domain.
void register_load_ways(std::string translation_unit);

}  // namespace kiln_bench
