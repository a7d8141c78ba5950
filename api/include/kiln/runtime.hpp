// The runtime: kernels by name, specialised on request, compiled once and
// cached on disk, so that every later process starts warm.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/collective.hpp"
#include "kiln/export.hpp"
#include "kiln/gpu_kernel.hpp"
#include "kiln/kernel.hpp"
#include "kiln/metrics.hpp"
#include "kiln/spec.hpp"

namespace kiln {

enum class Mode {
  specialised,  // specialisation values are compile-time constants
  generic,      // the same source, values passed at run time: one binary for every specialisation
};

// What a kernel's `#pragma kiln` lines declare, for tools that build its
// arguments and Spec from outside C++ (`kiln run`).
struct KernelArgument {
  std::string name;
  ElementType type;
  int rank;  // 0: a run-time scalar; 1 to 4: an array
};
struct KernelParameter {
  std::string name;
  ElementType type;  // domain parameters are i64; static ones boolean, i64 or f64
  bool domain;       // a domain parameter, else a static one
};
struct KernelDeclaration {
  std::string name;
  std::vector<KernelArgument> arguments;    // the call's arguments, in order
  std::vector<KernelParameter> parameters;  // what a Spec must give, in declaration order
  std::string file{};           // the file registered (absolute); empty for embedded kernels and text
  std::string source_digest{};  // the digest of the kernel's text, as cache keys and manifests take it
};

// The translation unit kiln compiles for a (kernel, specialisation, mode),
// as a miss generates it (Runtime::generated_source, `kiln cache show`).
struct GeneratedSource {
  std::string key;        // the cache key of its binary, hex (as Kernel::key())
  std::string file_name;  // the kernel's file, as its #line directives and diagnostics name it
  std::string text;       // one C++20 translation unit: the prelude, the entry, the kernel's body
  // How it is compiled, as the key holds it: "-O3 -ffp-contract=on -march=native", and " gather=on" or
  // " gather=off" when Config::gather names one (the compiler's fixed flags are its identity's:
  // jit/compiler/frontend.cpp).
  std::string options;
};

// A GPU to compile for. NVRTC (CUDA) compiles for "sm_90" (a CUBIN for that
// GPU) or "compute_90" (PTX, which the driver compiles for any later GPU);
// hipRTC (AMD) for "gfx90a" (MI250X), "gfx908" (MI100) and the other
// architectures jit/hiprtc.hpp lists as working with the installed ROCm.
// Compiling needs neither the GPU nor its driver.
enum class GpuBackend { cuda, hip };
struct GpuTarget {
  GpuBackend backend = GpuBackend::cuda;
  std::string arch;
};

// One kernel to resolve, for Runtime::kernels().
struct KernelRequest {
  std::string name;
  Spec spec;
  Mode mode = Mode::specialised;
};

// Every setting, with the KILN_* variable that sets it (docs/manual/configuration.md).
struct KILN_API Config {
  std::filesystem::path cache_dir;   // KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln
  std::filesystem::path index_path;  // KILN_INDEX_PATH, else <cache_dir>/index.sqlite; "off" disables
  bool use_disk_cache = true;        // KILN_CACHE_DISABLE=1 turns it off (memory only)
  bool print_metrics = false;        // KILN_METRICS=1: print the table when the Runtime ends
  std::filesystem::path metrics_file;  // KILN_METRICS_FILE: write the JSON there when the Runtime ends
  bool time_calls = false;           // on when either of the two above is: times every call
  std::string log_level = "warn";    // KILN_LOG_LEVEL: trace, debug, info, warn, error, off
  // KILN_LOCK_TIMEOUT (seconds): how long a process waits for another that
  // compiles the same kernel before it compiles on its own.
  std::chrono::milliseconds lock_timeout{60'000};
  // KILN_CACHE_PATH (folders separated by ':'): read-only tiers, searched in
  // order before cache_dir, e.g. a cache shipped with an application. New
  // entries always go to cache_dir.
  std::vector<std::filesystem::path> read_only_tiers;
  // KILN_TRUSTED_DIRS (':'-separated): folders whose cache entries are loaded
  // even though another user owns them or they are group- or world-writable.
  std::vector<std::filesystem::path> trusted_dirs;
  // KILN_CACHE_MAX_SIZE ("2G", "500M", bytes): when a Runtime that stored
  // entries ends, least recently used entries go until cache_dir fits. 0: no limit.
  std::uint64_t cache_max_size = 0;
  // KILN_BUILD_THREADS: threads Runtime::kernels() compiles with (default:
  // the CPUs this process may run on, at most 8; 0 here means that default).
  unsigned build_threads = 0;
  // KILN_BUILD_SLOTS: compiles running at once on this machine, over every
  // process of the user (a node-wide jobserver of lock files in
  // build_slot_dir). Unset: one per CPU online on the machine; 0: no limit.
  std::optional<unsigned> build_slots;
  // Where the slots live; empty: $XDG_RUNTIME_DIR/kiln/build-slots, else
  // /tmp/kiln-<uid>/build-slots (node-local either way).
  std::filesystem::path build_slot_dir;
  // KILN_COMPILE_TIMEOUT (seconds): a compile that runs longer is stopped
  // and throws CompileError (it holds a build slot and the kernel's build
  // lock meanwhile). No real kernel comes near the default. 0: no limit.
  std::chrono::milliseconds compile_timeout{600'000};
  // KILN_COMPILE_MEMORY ("4G", "512M", bytes): the address space one compile
  // may use (its worker process's RLIMIT_AS, clang and LLVM's own mappings
  // included); beyond it the compile throws CompileError. 0: no limit.
  std::uint64_t compile_memory = std::uint64_t{4} << 30;
  // How kernels are compiled; each is in the cache key. KILN_OPT_LEVEL: O0,
  // O1, O2, O3, Os or Oz.
  std::string opt_level = "O3";
  // KILN_FP_CONTRACT: multiply-add contraction. "on": a*b + c within one
  // expression may become one fused multiply-add (clang's default); "off":
  // every operation rounded as written, for bitwise agreement with code
  // compiled ahead of time with -ffp-contract=off; "fast": across statements
  // too (GCC's default for GNU C++, and gfortran's).
  std::string fp_contract = "on";
  // KILN_TARGET_CPU: what kernels are compiled for. "native": this host's CPU
  // (its model, stepping and features are in the key, so another CPU
  // misses); an x86-64 level ("x86-64", "x86-64-v2", "x86-64-v3",
  // "x86-64-v4") or an x86-64 CPU LLVM knows ("znver4", "sapphirerapids"):
  // only that name is in the key, so a cache warmed on a login node serves
  // compute nodes of it. A host that lacks one of its features loads none of
  // its kernels: kernel() throws LoadError naming them (precompile() still
  // compiles for it).
  std::string target_cpu = "native";
  // KILN_GATHER: how a vector loop reads each lane's neighbour through a
  // table. "auto": LLVM's tuning for the CPU compiled for decides (gathers
  // where it marks them fast, `fast-gather`: Intel from Skylake on; scalar
  // loads on AMD Zen); "on": gathers (-prefer-no-gather); "off": a scalar
  // load per lane (+prefer-no-gather). The results are the same bits. "on"
  // and "off" are named in the cache key; "auto" only through the CPU.
  std::string gather = "auto";
  // KILN_CHECK=1: check mode, for finding a bad table or domain. CPU kernels
  // compile with bounds-checked views and range-checked table reads (docs/manual/kernel-language.md,
  // "Check mode"); the first violation stops the kernel, before the access,
  // and the call throws ArgumentError naming the kernel, array, index and
  // point. Slower (see docs/performance.md); in the cache key. GPU kernels
  // are built unchecked (a warning says so).
  bool check = false;
  // KILN_THREADS: the threads a kernel call runs on (the prelude's helpers are
  // phases: their points shared among the threads, a barrier after each). 0:
  // OpenMP's count when OMP_NUM_THREADS is set (OMP_PLACES binds them), else
  // 1 (a call is then an indirect call). Kernel::run_on chooses per call; a
  // call inside an OpenMP parallel region runs on its calling thread alone.
  // At most kMaxThreads, here, in KILN_THREADS and in Kernel::run_on alike.
  int threads = 0;
  static constexpr int kMaxThreads = 1024;
  // KILN_TIERED=1: tiered start (docs/manual/tiered-start.md). A kernel()
  // whose specialised build is neither in this process nor in the cache
  // returns at once with the kernel's generic build (linked, from the cache,
  // or compiled first: one serves every specialisation); a thread of the
  // Runtime's builds the specialised one, which the handle then calls from
  // its next call on (no lock on the call path). Results are the same bits.
  // Timed calls are recorded per build: "<name> (generic)" and "<name>".
  bool tiered = false;
  // KILN_TIERED_OPT_LEVEL: the optimisation level of the generic builds that
  // tiered start compiles to stand in (one of opt_level's; in their key). They
  // run only until the specialised build replaces them, so they are compiled
  // for a short compile: "O1" takes about half of -O3's time. A generic build
  // at opt_level already linked or in the cache (kiln warm) is taken first.
  std::string tiered_opt_level = "O1";

  // Reads the variables; unset ones keep the defaults above.
  static Config from_env();
  // Throws Error naming the field, its value and what it may be when a field
  // lies outside what its KILN_* variable accepts (log_level, build_threads,
  // build_slots, threads, the timeouts, target_cpu, gather): the C and Fortran
  // setters check each value so, when it is set.
  void validate() const;
};

class KILN_API Runtime {
 public:
  Runtime();  // Config::from_env()
  explicit Runtime(Config config);
  ~Runtime();  // prints / writes metrics if configured
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The handle for `name` specialised on `spec`. Thread-safe. Throws
  // UnknownKernelError, SpecError, CompileError, ToolchainError.
  Kernel kernel(std::string_view name, const Spec& spec, Mode mode = Mode::specialised);

  // Many handles at once, in the order of `requests`: what must be compiled
  // is compiled by config().build_threads threads. A kernel that another
  // process is compiling is left for later while this one compiles others,
  // so processes asking for the same kernels share the work instead of
  // queueing behind one. Thread-safe. When some requests fail, the others are
  // still resolved (and cached), then the first error is thrown.
  std::vector<Kernel> kernels(std::span<const KernelRequest> requests);

  // The same, resolved together by every member of `group` (MPI ranks: see
  // kiln/mpi.hpp). Collective: every member calls it, each with its own
  // requests (its own sizes, its own count). The union of the keys is
  // resolved: member 0 alone reads the cache; each distinct miss is compiled
  // once, by a member that asked for it, and published to the cache; the
  // binaries reach the members through the group and are linked from memory,
  // each member getting exactly what it asked for. So only member 0 and the
  // compiling members touch the cache folder: no metadata storm of thousands
  // of ranks opening every entry. Requests that do not prepare on some member
  // (SpecError, UnknownKernelError, "member N: ...") and a kernel that does
  // not compile (CompileError) throw the same error on every member.
  std::vector<Kernel> kernels(std::span<const KernelRequest> requests, Communicator& group);

  // Compiles `name` for a GPU into the cache, or finds it there, without the
  // GPU: a login node filling the cache for its compute nodes (`kiln warm`).
  // The same cache, build lock, checksums and index as CPU kernels; the key
  // holds the backend, the architecture and the compiler's version. Returns
  // the key. Throws ToolchainError when the GPU compiler is missing, Error
  // for an architecture it does not support, SpecError, CompileError (with
  // the compiler's log).
  std::string precompile(std::string_view name, const Spec& spec, const GpuTarget& target,
                         Mode mode = Mode::specialised);
  // The same for the CPU target (Config::target_cpu), which this host need
  // not be able to run: a login node compiling for compute nodes of another
  // x86-64 level (`kiln warm --target-cpu`). Nothing is loaded. Returns the key.
  std::string precompile(std::string_view name, const Spec& spec, Mode mode = Mode::specialised);

  // `name` loaded on NVIDIA GPU `device`: compiled for its architecture (or
  // found in the cache) and ready to launch on a stream. Throws GpuError
  // naming what is missing (driver, device, cooperative launch), as well as
  // precompile()'s errors. Thread-safe.
  GpuKernel gpu_kernel(std::string_view name, const Spec& spec, Mode mode = Mode::specialised, int device = 0);

  // The translation unit kiln compiles for `name` on `spec` in `mode` with
  // this Runtime's options, and the key its binary is cached under: generated
  // as a miss generates it, without compiling, loading or reading the cache.
  // Throws UnknownKernelError, SpecError; for a GPU, what precompile() throws
  // before it compiles (ToolchainError without the GPU compiler).
  GeneratedSource generated_source(std::string_view name, const Spec& spec, Mode mode = Mode::specialised);
  GeneratedSource generated_source(std::string_view name, const Spec& spec, const GpuTarget& target,
                                   Mode mode = Mode::specialised);

  // Adds a kernel from source text in the kernel format (docs/manual/kernel-language.md); returns its
  // name. `file_name` is what diagnostics call the source. Throws
  // KernelSourceError when malformed or when the name is an embedded
  // kernel's. A name registered again: the same text changes nothing; a new
  // text replaces the old for every later request (kernel(), kernels()),
  // while handles already resolved keep calling the old binary. (A request
  // of that name still being resolved on another thread meanwhile may
  // publish the old binary: register before resolving.)
  std::string register_kernel(std::string_view source, std::string_view file_name = "<user kernel>");
  std::string register_kernel_file(const std::filesystem::path& path);
  std::vector<std::string> kernel_names() const;
  // The declarations of a registered kernel. Throws UnknownKernelError.
  KernelDeclaration declaration(std::string_view name) const;

  // Tiered start (Config::tiered): returns when every specialised build
  // queued so far has replaced its generic build, or failed (the log says
  // why; that kernel stays on its generic build). Calls never need it.
  void wait_for_specialised();

  const Config& config() const;
  MetricsSnapshot metrics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
