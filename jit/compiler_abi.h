/* The C interface between libkiln and its compiler module (libkiln_clang.so).
 * The module holds clang and LLVM's code generator; libkiln loads it with
 * dlopen(RTLD_LOCAL) on the first cache miss, so a warm process never maps
 * clang. A plain C table keeps the two sides free of each other's C++ ABI. */
#ifndef KILN_JIT_COMPILER_ABI_H
#define KILN_JIT_COMPILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_COMPILER_ABI_VERSION 3u
#define KILN_COMPILER_ENTRY_SYMBOL "kiln_compiler_entry"

typedef struct kiln_compile_request {
  const char* source;      /* one self-contained C++20 translation unit */
  size_t source_size;
  const char* file_name;   /* the name clang gives the main file in diagnostics */
  const char* cpu;         /* e.g. "znver3": compile for exactly this CPU ... */
  const char* features;    /* ... and these features: "+avx2,+fma,-avx512f".
                              cpu NULL or "": the host's CPU and features (-march=native) */
  const char* opt_level;   /* "-O3" */
  const char* fp_contract; /* "on" (NULL or ""), "off" or "fast": -ffp-contract */
} kiln_compile_request;

typedef struct kiln_compile_result {
  int ok;                  /* 1: binary holds an ELF shared object (linked by lld) */
  char* binary;            /* malloc'd; released by free_result */
  size_t binary_size;
  char* diagnostics;       /* malloc'd, NUL-terminated; clang's messages, or the reason for failure */
} kiln_compile_result;

typedef struct kiln_compiler {
  uint32_t abi_version;    /* KILN_COMPILER_ABI_VERSION */
  /* "clang 19.1.7 ...; lld ..." : what produced the binaries; goes into cache keys. */
  const char* (*identity)(void);
  /* The host CPU and features as LLVM sees them (what an empty request cpu means). */
  const char* (*host_cpu)(void);
  const char* (*host_features)(void);
  /* Thread-safe. Returns result->ok; never throws, never aborts on bad source. */
  int (*compile)(const kiln_compile_request* request, kiln_compile_result* result);
  void (*free_result)(kiln_compile_result* result);
} kiln_compiler;

/* Sets up the compiler once per process (driver arguments, resource dir).
 * resource_dir: clang's resource directory (must hold include/stddef.h).
 * On failure returns NULL and writes a malloc'd message to *error. */
typedef const kiln_compiler* (*kiln_compiler_entry_fn)(const char* resource_dir, char** error);

#ifdef __cplusplus
}
#endif

#endif
