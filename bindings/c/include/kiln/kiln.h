/* kiln from C (C99) and any language that calls C: Fortran through
 * ISO_C_BINDING, Python through ctypes or cffi.
 *
 * Handles are opaque. Every call returns a kiln_status; KILN_OK is 0, and on
 * any other status kiln_last_error() gives this thread's message naming the
 * kernel, the argument and the cause. No exception ever crosses this header.
 * A kiln_kernel stays valid while its runtime lives; resolving the same
 * (kernel, specialisation, mode) again is a memory hit (about 30 ns).
 *
 * Link: CMake target kiln::c (libkiln_c), or pkg-config kiln. */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include "kiln/arg.hpp" /* the same kiln_arg and kiln_value, declared in C++ */
extern "C" {
#else
/* One argument of a call: arrays as (data, shape, strides in elements),
 * scalars by value. The same layout as kiln/arg.hpp and the kernels' prelude. */
typedef struct kiln_arg {
  void* data;         /* arrays: the element at index (0, ..., 0); scalars: NULL */
  int64_t shape[4];   /* arrays: extent per dimension */
  int64_t strides[4]; /* arrays: in elements, per dimension */
  union {
    double f64;
    int64_t i64;
  } scalar;     /* scalars: the value (bool and int32 widened to i64) */
  int32_t type; /* kiln_type */
  int32_t rank; /* 0 for scalars */
} kiln_arg;
/* C99 has no static_assert: an array of negative size fails to compile. */
typedef char kiln_arg_is_88_bytes[sizeof(kiln_arg) == 88 ? 1 : -1];
#endif

#if defined(_WIN32)
#define KILN_C_API
#else
#define KILN_C_API __attribute__((visibility("default")))
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR = 1,                  /* any other kiln error */
  KILN_ERROR_INVALID_ARGUMENT = 2, /* a misuse of this API: a null pointer, an unknown enum value */
  KILN_ERROR_UNKNOWN_KERNEL = 3,   /* no kernel of that name is registered */
  KILN_ERROR_KERNEL_SOURCE = 4,    /* a kernel text is malformed, or its name is taken */
  KILN_ERROR_SPEC = 5,             /* a specialisation value is missing, unknown or ill-typed */
  KILN_ERROR_ARGUMENT = 6,         /* a call's count, type, rank or strides */
  KILN_ERROR_COMPILE = 7,          /* the kernel does not compile (the message holds the diagnostics) */
  KILN_ERROR_TOOLCHAIN = 8,        /* the compiler is missing or broken */
  KILN_ERROR_LOAD = 9,             /* a binary does not load into the process */
  KILN_ERROR_GPU = 10,             /* no GPU driver or device, or the driver refused */
  KILN_ERROR_OUT_OF_MEMORY = 11,
  KILN_ERROR_INTERNAL = 12         /* a failure that is not a kiln error (a bug: please report it) */
} kiln_status;

typedef enum kiln_type { KILN_F64 = 1, KILN_F32 = 2, KILN_I32 = 3, KILN_I64 = 4, KILN_BOOL = 5 } kiln_type;
typedef enum kiln_mode { KILN_SPECIALISED = 0, KILN_GENERIC = 1 } kiln_mode;
typedef enum kiln_gpu_backend { KILN_CUDA = 0, KILN_HIP = 1 } kiln_gpu_backend;

typedef struct kiln_config kiln_config;
typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_spec kiln_spec;
typedef struct kiln_declaration kiln_declaration;
typedef struct kiln_kernel_s* kiln_kernel; /* resolved; valid while its runtime lives */

/* This thread's message about its last failed call; "" when none failed yet. */
KILN_C_API const char* kiln_last_error(void);
/* Frees what a kiln_* call allocated for the caller (kiln_metrics_json). */
KILN_C_API void kiln_free(void* pointer);

/* --- settings and runtimes --------------------------------------------- */
/* The settings the KILN_* variables give (docs/manual/configuration.md), to change before creating a runtime. */
KILN_C_API kiln_status kiln_config_from_env(kiln_config** out);
KILN_C_API void kiln_config_destroy(kiln_config* config);
KILN_C_API kiln_status kiln_config_set_cache_dir(kiln_config* config, const char* path);
KILN_C_API kiln_status kiln_config_set_index_path(kiln_config* config, const char* path); /* "off": none */
KILN_C_API kiln_status kiln_config_set_disk_cache(kiln_config* config, int enabled);
KILN_C_API kiln_status kiln_config_set_lock_timeout(kiln_config* config, double seconds);
KILN_C_API kiln_status kiln_config_set_build_threads(kiln_config* config, int threads); /* 0: default */
KILN_C_API kiln_status kiln_config_set_metrics_file(kiln_config* config, const char* path);
KILN_C_API kiln_status kiln_config_set_log_level(kiln_config* config, const char* level);
/* KILN_CHECK: check mode (bounds-checked kernels) when nonzero. */
KILN_C_API kiln_status kiln_config_set_check(kiln_config* config, int enabled);
/* KILN_THREADS: the threads a kernel call runs on, 0 (OpenMP's choice) to 1024. */
KILN_C_API kiln_status kiln_config_set_threads(kiln_config* config, int threads);
/* KILN_TARGET_CPU: "native", an x86-64 level ("x86-64-v3") or a CPU LLVM knows ("znver4"). */
KILN_C_API kiln_status kiln_config_set_target_cpu(kiln_config* config, const char* cpu);
/* KILN_GATHER: "auto" (LLVM's tuning for the CPU decides), "on" (gathers) or "off"
 * (a scalar load per lane) for a neighbour read through a table; the same bits either way. */
KILN_C_API kiln_status kiln_config_set_gather(kiln_config* config, const char* gather);
/* KILN_TIERED: tiered start when nonzero (docs/manual/tiered-start.md): a specialised
 * miss runs its generic build at once while the specialised one compiles. */
KILN_C_API kiln_status kiln_config_set_tiered(kiln_config* config, int enabled);
/* Each setter refuses (KILN_ERROR_INVALID_ARGUMENT, kiln_last_error() says why)
 * a value its KILN_* variable would refuse, and leaves the config as it was. */

/* A runtime configured from the KILN_* variables, or from `config`. */
KILN_C_API kiln_status kiln_runtime_create(kiln_runtime** out);
KILN_C_API kiln_status kiln_runtime_create_from_config(const kiln_config* config, kiln_runtime** out);
/* Tiered start: returns when every specialised build queued so far has replaced its
 * generic build, or failed (the log says why). For tests and benchmarks: calls never need it. */
KILN_C_API kiln_status kiln_wait_for_specialised(kiln_runtime* runtime);
/* Ends the runtime (metrics are printed or written if configured); its kernels become invalid. */
KILN_C_API void kiln_runtime_destroy(kiln_runtime* runtime);

/* Adds a kernel from text in the kernel format (docs/manual/kernel-language.md), or from a file.
 * `name_out` (may be NULL) receives its name, owned by the runtime. */
KILN_C_API kiln_status kiln_register_kernel(kiln_runtime* runtime, const char* text, const char* file_name,
                                            const char** name_out);
KILN_C_API kiln_status kiln_register_kernel_file(kiln_runtime* runtime, const char* path, const char** name_out);

/* --- specialisations --------------------------------------------------- */
KILN_C_API kiln_status kiln_spec_create(kiln_spec** out);
KILN_C_API void kiln_spec_destroy(kiln_spec* spec);
KILN_C_API kiln_status kiln_spec_set_int(kiln_spec* spec, const char* name, int64_t value);
KILN_C_API kiln_status kiln_spec_set_double(kiln_spec* spec, const char* name, double value);
KILN_C_API kiln_status kiln_spec_set_bool(kiln_spec* spec, const char* name, int value);
/* Parameter `name`, already set, is read at run time instead of compiled in:
 * one binary serves all its values (Spec::run_time; ICON: the horizontal
 * bounds at run time, one binary for every rank). */
KILN_C_API kiln_status kiln_spec_set_run_time(kiln_spec* spec, const char* name);
/* Fixes the strides (in elements) of array argument `array`: `rank` values, 1 to 4. */
KILN_C_API kiln_status kiln_spec_set_strides(kiln_spec* spec, const char* array, const int64_t* strides, int rank);
/* ICON's blocked layout: array argument `array`, declared over (horizontal,
 * ...), is passed with one dimension more, (nproma, ..., nblks); horizontal
 * index c lies at (c % nproma, ..., c / nproma). */
KILN_C_API kiln_status kiln_spec_set_blocked(kiln_spec* spec, const char* array, int64_t nproma);
/* The same with its strides fixed too: `rank` values, the declared rank + 1. */
KILN_C_API kiln_status kiln_spec_set_blocked_strides(kiln_spec* spec, const char* array, int64_t nproma,
                                                     const int64_t* strides, int rank);
/* The same for `view`, a blocked array as it will be passed: nproma (its
 * first extent), its strides and its block count (its last extent) are all
 * fixed. One block (nproma = n_cells) then reads neighbours as a flat array. */
KILN_C_API kiln_status kiln_spec_set_blocked_like(kiln_spec* spec, const char* array, const kiln_arg* view);

/* --- resolving --------------------------------------------------------- */
/* From memory, the disk cache or the compiler. */
KILN_C_API kiln_status kiln_kernel_get(kiln_runtime* runtime, const char* name, const kiln_spec* spec,
                                       kiln_mode mode, kiln_kernel* out);
typedef struct kiln_request {
  const char* name;
  const kiln_spec* spec;
  kiln_mode mode;
} kiln_request;
/* Many at once, compiled in parallel; out[i] for requests[i]. When some fail,
 * the others are still resolved, and the first failure is returned. */
KILN_C_API kiln_status kiln_kernels_get(kiln_runtime* runtime, const kiln_request* requests, size_t count,
                                        kiln_kernel* out);
/* Collectively over MPI ranks: kiln/kiln_mpi.h (library kiln::c_mpi). */

/* --- calling ----------------------------------------------------------- */
/* `args` in declaration order (kiln_declaration). */
KILN_C_API kiln_status kiln_call(kiln_kernel kernel, const kiln_arg* args, size_t count);
/* The same with args[i] pointing at argument i. */
KILN_C_API kiln_status kiln_call_pointers(kiln_kernel kernel, const kiln_arg* const* args, size_t count);

/* ICON's neighbour arrays idx(nproma, nblks, n) and blk(...), int32, 1-based,
 * both 0 where a neighbour is missing, into kiln's flat 0-based int32 table
 * [n_entities][n] (-1 where missing): kiln/blocks.hpp. On an error nothing
 * is written. */
KILN_C_API kiln_status kiln_flat_table(const kiln_arg* idx, const kiln_arg* blk, const kiln_arg* table);

/* Views: strides in elements; rank 1 to 4. kiln_array_f/_c fill the strides
 * of Fortran (first index contiguous) or C order. */
KILN_C_API kiln_status kiln_array(void* data, kiln_type type, int rank, const int64_t* shape, const int64_t* strides,
                                  kiln_arg* out);
KILN_C_API kiln_status kiln_array_f(void* data, kiln_type type, int rank, const int64_t* shape, kiln_arg* out);
KILN_C_API kiln_status kiln_array_c(void* data, kiln_type type, int rank, const int64_t* shape, kiln_arg* out);
KILN_C_API kiln_arg kiln_scalar_f64(double value);
KILN_C_API kiln_arg kiln_scalar_f32(float value);
KILN_C_API kiln_arg kiln_scalar_i64(int64_t value);
KILN_C_API kiln_arg kiln_scalar_i32(int32_t value);
KILN_C_API kiln_arg kiln_scalar_bool(int value);

/* --- what a kernel declares -------------------------------------------- */
KILN_C_API kiln_status kiln_declaration_get(const kiln_runtime* runtime, const char* name, kiln_declaration** out);
KILN_C_API void kiln_declaration_destroy(kiln_declaration* declaration);
KILN_C_API size_t kiln_declaration_argument_count(const kiln_declaration* declaration);
/* Argument i: its name (owned by the declaration), type and rank (0: a scalar). */
KILN_C_API kiln_status kiln_declaration_argument(const kiln_declaration* declaration, size_t i, const char** name,
                                                 kiln_type* type, int* rank);
KILN_C_API size_t kiln_declaration_parameter_count(const kiln_declaration* declaration);
/* Parameter i: its name, type, and whether it is a domain parameter (else a static one). */
KILN_C_API kiln_status kiln_declaration_parameter(const kiln_declaration* declaration, size_t i, const char** name,
                                                  kiln_type* type, int* domain);

/* --- metrics and GPUs -------------------------------------------------- */
/* The init-vs-run metrics as JSON, in a string to release with kiln_free. */
KILN_C_API kiln_status kiln_metrics_json(const kiln_runtime* runtime, char** json_out);
KILN_C_API kiln_status kiln_metrics_write(const kiln_runtime* runtime, const char* path);
/* Compiles `name` for a GPU into the cache (no GPU needed); `key_out`
 * (33 chars, may be NULL) receives the cache key. */
KILN_C_API kiln_status kiln_precompile(kiln_runtime* runtime, const char* name, const kiln_spec* spec,
                                       kiln_gpu_backend backend, const char* arch, kiln_mode mode, char* key_out);

#ifdef __cplusplus
}
#endif
#endif /* KILN_KILN_H */
