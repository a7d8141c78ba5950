// Inside libkiln_clang.so: links a kernel's relocatable object into an ELF
// shared object with lld, in process. libkiln then maps cached kernels itself
// (jit/elf_image) or with dlopen, far cheaper per load than LLVM ORC linking
// the relocatable object in memory, and keeps LLVM out of every warm process
// (kiln_bench's load/ rows, docs/design.md section 6).
#pragma once

#include <string>
#include <vector>

namespace kiln::jit::compiler {

struct Linked {
  bool ok = false;
  std::vector<char> shared_object;  // when ok
  std::string diagnostics;          // lld's messages, or why it failed
};

// Links `object` with `-shared -z now -z relro -z defs` against the C and math
// libraries this process runs with (their sonames become DT_NEEDED as needed),
// so a symbol the kernel uses but nothing defines fails here, at compile time,
// rather than at load. Thread-safe: lld keeps global state, so links run one at
// a time. Works in a private temporary folder, kiln-link-XXXXXX (under
// $TMPDIR, or /tmp when $TMPDIR is unset, missing or cannot be written),
// removed before returning; the first link of a process in a folder sweeps
// the folders killed links left there (older than an hour, this user's).
Linked link_shared_object(const std::vector<char>& object);

// "lld 19.1.7; -shared -z now ...": goes into the compiler's identity.
std::string linker_identity();

}  // namespace kiln::jit::compiler
