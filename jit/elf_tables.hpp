// The tables of a kernel's ELF object that glibc's dynamic loader reads
// without checking them: the dynamic symbol table, the string table, the
// hash tables (GNU and SysV), the symbol versions and the relocations. A
// forged cache entry with flipped bytes there crashed the loader inside
// dlopen (a zero bucket count divides by zero, a chain index reads past the
// table, a version index past the loader's array, an IFUNC symbol has the
// kernel's code called as a resolver). shared_object_problem() runs this
// check after the program headers', before anything is mapped.
#pragma once

#include <elf.h>

#include <span>
#include <string>
#include <vector>

namespace kiln::jit {

// Empty when every table the dynamic section names lies within the file bytes
// of a loadable segment and is consistent (every index within its table,
// every name within the string table, every chain ends, every relocation
// writes into a writable segment); else what is wrong, as "its <table> ...".
// `loads` are the PT_LOAD headers (checked: within `binary`, ascending),
// `dynamic` the PT_DYNAMIC one (within a segment's file bytes, ends in DT_NULL).
std::string dynamic_tables_problem(std::span<const char> binary, const std::vector<const Elf64_Phdr*>& loads,
                                   const Elf64_Phdr& dynamic);

}  // namespace kiln::jit
