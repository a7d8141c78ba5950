// The C ABI over the public C++ API: every entry point catches everything and
// turns it into a status and this thread's message (guard()).
#include "kiln/kiln.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings/c/c_handles.hpp"
#include "kiln/kiln.hpp"

namespace {

using kiln::c::fail;
using kiln::c::guard;
using kiln::c::require;

// Changes a copy, which Config::validate() must pass (the bounds of the KILN_*
// variables), then the config: a refused value leaves it as it was.
template <class Change>
void set_checked(kiln_config* config, const char* setter, Change change) {
  kiln::Config next = config->config;
  change(next);
  try {
    next.validate();
  } catch (const kiln::Error& e) {
    std::string_view why = e.what();
    if (why.rfind("kiln: ", 0) == 0) why.remove_prefix(6);  // said once, before the setter
    fail(KILN_ERROR_INVALID_ARGUMENT, "kiln: " + std::string(setter) + ": " + std::string(why));
  }
  config->config = std::move(next);
}

kiln::Mode mode_of(kiln_mode mode) {
  require(mode == KILN_SPECIALISED || mode == KILN_GENERIC, "kiln_mode must be KILN_SPECIALISED or KILN_GENERIC");
  return mode == KILN_SPECIALISED ? kiln::Mode::specialised : kiln::Mode::generic;
}

kiln_type type_of(kiln::ElementType type) { return static_cast<kiln_type>(type); }

kiln::ElementType element_type_of(kiln_type type) {
  require(type >= KILN_F64 && type <= KILN_BOOL, "kiln_type must be one of KILN_F64 ... KILN_BOOL");
  return static_cast<kiln::ElementType>(type);
}

std::string extents_text(int rank, const int64_t* shape) {
  std::string text;
  for (int d = 0; d < rank; ++d) text += (d ? " x " : "") + std::to_string(shape[d]);
  return text;
}

// Strides of `rank` dimensions in Fortran (first index contiguous) or C order,
// into out[0, rank).
void dense_strides(int rank, const int64_t* shape, bool fortran, std::int64_t* out) {
  std::int64_t step = 1;
  for (int n = 0; n < rank; ++n) {
    const int d = fortran ? n : rank - 1 - n;
    out[d] = step;
    if (__builtin_mul_overflow(step, shape[d], &step))
      fail(KILN_ERROR_INVALID_ARGUMENT,
           "kiln: kiln_array: the extents " + extents_text(rank, shape) + " hold more elements than 64 bits count");
  }
}

enum class Order { fortran, c };

// Why rank, extents and data cannot make a view, or nothing. The messages are
// built only for a refusal: these calls are on a Fortran caller's hot path
// when it builds its views inside each kiln_call (~60 ns a call with the
// checks, ~3 us when every check built its message).
void check_array(const void* data, int rank, const int64_t* shape) {
  if (rank < 1 || rank > kiln::kMaxRank)
    fail(KILN_ERROR_INVALID_ARGUMENT, "kiln: kiln_array: rank " + std::to_string(rank) + " is not 1 to 4");
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      fail(KILN_ERROR_INVALID_ARGUMENT, "kiln: kiln_array: extent " + std::to_string(d) + " is " +
                                            std::to_string(shape[d]) + ", negative");
    empty = empty || shape[d] == 0;
  }
  // A kernel would read and write through the pointer: NULL only where
  // there is nothing to touch (a Fortran array of size 0 may have no address).
  if (data == nullptr && !empty)
    fail(KILN_ERROR_INVALID_ARGUMENT, "kiln: kiln_array: data is NULL for an array of " + extents_text(rank, shape) +
                                          " elements (NULL is accepted only for an array with an extent 0)");
}

// A view of `data`: strides given, or dense in an Order, computed once rank
// and extents are known to be valid.
template <class Strides>
kiln_status make_array(void* data, kiln_type type, int rank, const int64_t* shape, Strides strides, kiln_arg* out) {
  return guard([&] {
    constexpr bool given = std::is_same_v<Strides, const int64_t*>;
    if constexpr (given) require(strides != nullptr, "kiln_array: strides must not be NULL");
    require(out != nullptr && shape != nullptr, "kiln_array: out and shape must not be NULL");
    check_array(data, rank, shape);
    kiln_arg arg{};
    arg.data = data;
    arg.type = static_cast<std::int32_t>(element_type_of(type));
    arg.rank = rank;
    for (int d = 0; d < rank; ++d) arg.shape[d] = shape[d];
    if constexpr (given) {
      for (int d = 0; d < rank; ++d) arg.strides[d] = strides[d];
    } else {
      dense_strides(rank, shape, strides == Order::fortran, arg.strides);
    }
    *out = arg;
  });
}

}  // namespace

extern "C" {

const char* kiln_last_error(void) { return kiln::c::last_error().c_str(); }
void kiln_free(void* pointer) { std::free(pointer); }

kiln_status kiln_config_from_env(kiln_config** out) {
  return guard([&] {
    require(out != nullptr, "kiln_config_from_env: out must not be NULL");
    *out = new kiln_config{kiln::Config::from_env()};
  });
}
void kiln_config_destroy(kiln_config* config) { delete config; }

kiln_status kiln_config_set_cache_dir(kiln_config* config, const char* path) {
  return guard([&] {
    require(config && path, "kiln_config_set_cache_dir: config and path must not be NULL");
    config->config.cache_dir = path;
  });
}
kiln_status kiln_config_set_index_path(kiln_config* config, const char* path) {
  return guard([&] {
    require(config && path, "kiln_config_set_index_path: config and path must not be NULL");
    config->config.index_path = path;
  });
}
kiln_status kiln_config_set_disk_cache(kiln_config* config, int enabled) {
  return guard([&] {
    require(config, "kiln_config_set_disk_cache: config must not be NULL");
    config->config.use_disk_cache = enabled != 0;
  });
}
kiln_status kiln_config_set_lock_timeout(kiln_config* config, double seconds) {
  return guard([&] {
    require(config, "kiln_config_set_lock_timeout: config must not be NULL");
    require(seconds >= 0 && seconds < 1e9, "kiln_config_set_lock_timeout: seconds must be 0 or more");
    config->config.lock_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  });
}
kiln_status kiln_config_set_build_threads(kiln_config* config, int threads) {
  return guard([&] {
    require(config, "kiln_config_set_build_threads: config must not be NULL");
    require(threads >= 0, "kiln_config_set_build_threads: threads must be 0 (the default) or more");
    set_checked(config, "kiln_config_set_build_threads", [&](kiln::Config& c) { c.build_threads = static_cast<unsigned>(threads); });
  });
}
kiln_status kiln_config_set_metrics_file(kiln_config* config, const char* path) {
  return guard([&] {
    require(config && path, "kiln_config_set_metrics_file: config and path must not be NULL");
    config->config.metrics_file = path;
    config->config.time_calls = config->config.print_metrics || !config->config.metrics_file.empty();
  });
}
kiln_status kiln_config_set_log_level(kiln_config* config, const char* level) {
  return guard([&] {
    require(config && level, "kiln_config_set_log_level: config and level must not be NULL");
    set_checked(config, "kiln_config_set_log_level", [&](kiln::Config& c) { c.log_level = level; });
  });
}
kiln_status kiln_config_set_check(kiln_config* config, int enabled) {
  return guard([&] {
    require(config, "kiln_config_set_check: config must not be NULL");
    config->config.check = enabled != 0;
  });
}
kiln_status kiln_config_set_threads(kiln_config* config, int threads) {
  return guard([&] {
    require(config, "kiln_config_set_threads: config must not be NULL");
    set_checked(config, "kiln_config_set_threads", [&](kiln::Config& c) { c.threads = threads; });
  });
}
kiln_status kiln_config_set_target_cpu(kiln_config* config, const char* cpu) {
  return guard([&] {
    require(config && cpu, "kiln_config_set_target_cpu: config and cpu must not be NULL");
    set_checked(config, "kiln_config_set_target_cpu", [&](kiln::Config& c) { c.target_cpu = cpu; });
  });
}
kiln_status kiln_config_set_gather(kiln_config* config, const char* gather) {
  return guard([&] {
    require(config && gather, "kiln_config_set_gather: config and gather must not be NULL");
    set_checked(config, "kiln_config_set_gather", [&](kiln::Config& c) { c.gather = gather; });
  });
}
kiln_status kiln_config_set_tiered(kiln_config* config, int enabled) {
  return guard([&] {
    require(config, "kiln_config_set_tiered: config must not be NULL");
    config->config.tiered = enabled != 0;
  });
}

kiln_status kiln_runtime_create(kiln_runtime** out) {
  return guard([&] {
    require(out != nullptr, "kiln_runtime_create: out must not be NULL");
    *out = new kiln_runtime{};
  });
}
kiln_status kiln_runtime_create_from_config(const kiln_config* config, kiln_runtime** out) {
  return guard([&] {
    require(config && out, "kiln_runtime_create_from_config: config and out must not be NULL");
    *out = new kiln_runtime(config->config);
  });
}
kiln_status kiln_wait_for_specialised(kiln_runtime* runtime) {
  return guard([&] {
    require(runtime != nullptr, "kiln_wait_for_specialised: runtime must not be NULL");
    runtime->rt.wait_for_specialised();
  });
}
void kiln_runtime_destroy(kiln_runtime* runtime) {
  (void)guard([&] { delete runtime; });  // ~Runtime logs its own failures; nothing to return here
}

kiln_status kiln_register_kernel(kiln_runtime* runtime, const char* text, const char* file_name,
                                 const char** name_out) {
  return guard([&] {
    require(runtime && text, "kiln_register_kernel: runtime and text must not be NULL");
    const std::string name = runtime->rt.register_kernel(text, file_name ? file_name : "<user kernel>");
    if (name_out) *name_out = runtime->keep(name);
  });
}
kiln_status kiln_register_kernel_file(kiln_runtime* runtime, const char* path, const char** name_out) {
  return guard([&] {
    require(runtime && path, "kiln_register_kernel_file: runtime and path must not be NULL");
    const std::string name = runtime->rt.register_kernel_file(path);
    if (name_out) *name_out = runtime->keep(name);
  });
}

kiln_status kiln_spec_create(kiln_spec** out) {
  return guard([&] {
    require(out != nullptr, "kiln_spec_create: out must not be NULL");
    *out = new kiln_spec{};
  });
}
void kiln_spec_destroy(kiln_spec* spec) { delete spec; }

kiln_status kiln_spec_set_int(kiln_spec* spec, const char* name, int64_t value) {
  return guard([&] {
    require(spec && name, "kiln_spec_set_int: spec and name must not be NULL");
    spec->spec.set(name, static_cast<long long>(value));
  });
}
kiln_status kiln_spec_set_double(kiln_spec* spec, const char* name, double value) {
  return guard([&] {
    require(spec && name, "kiln_spec_set_double: spec and name must not be NULL");
    spec->spec.set(name, value);
  });
}
kiln_status kiln_spec_set_bool(kiln_spec* spec, const char* name, int value) {
  return guard([&] {
    require(spec && name, "kiln_spec_set_bool: spec and name must not be NULL");
    spec->spec.set(name, value != 0);
  });
}
kiln_status kiln_spec_set_run_time(kiln_spec* spec, const char* name) {
  return guard([&] {
    require(spec && name, "kiln_spec_set_run_time: spec and name must not be NULL");
    spec->spec.run_time(name);
  });
}
kiln_status kiln_spec_set_strides(kiln_spec* spec, const char* array, const int64_t* strides, int rank) {
  return guard([&] {
    require(spec && array && strides, "kiln_spec_set_strides: spec, array and strides must not be NULL");
    require(rank >= 1 && rank <= kiln::kMaxRank,
            std::string("kiln_spec_set_strides: '") + array + "': rank " + std::to_string(rank) + " is not 1 to 4");
    kiln_arg view{};
    view.rank = rank;
    std::copy(strides, strides + rank, view.strides);
    spec->spec.strides_of(array, view);
  });
}

kiln_status kiln_spec_set_blocked(kiln_spec* spec, const char* array, int64_t nproma) {
  return guard([&] {
    require(spec && array, "kiln_spec_set_blocked: spec and array must not be NULL");
    spec->spec.blocked(array, nproma);
  });
}

kiln_status kiln_spec_set_blocked_strides(kiln_spec* spec, const char* array, int64_t nproma, const int64_t* strides,
                                          int rank) {
  return guard([&] {
    require(spec && array && strides, "kiln_spec_set_blocked_strides: spec, array and strides must not be NULL");
    require(rank >= 2 && rank <= kiln::kMaxRank, std::string("kiln_spec_set_blocked_strides: '") + array +
                                                     "': rank " + std::to_string(rank) + " is not 2 to 4");
    kiln_arg view{};
    view.rank = rank;
    view.shape[0] = nproma;
    std::copy(strides, strides + rank, view.strides);
    spec->spec.blocked_like(array, view);
  });
}

kiln_status kiln_spec_set_blocked_like(kiln_spec* spec, const char* array, const kiln_arg* view) {
  return guard([&] {
    require(spec && array && view, "kiln_spec_set_blocked_like: spec, array and view must not be NULL");
    require(view->rank >= 2 && view->rank <= kiln::kMaxRank, std::string("kiln_spec_set_blocked_like: '") + array +
                                                                 "': rank " + std::to_string(view->rank) +
                                                                 " is not 2 to 4");
    spec->spec.blocked_like(array, *view);
  });
}

kiln_status kiln_kernel_get(kiln_runtime* runtime, const char* name, const kiln_spec* spec, kiln_mode mode,
                            kiln_kernel* out) {
  return guard([&] {
    require(runtime && name && spec && out, "kiln_kernel_get: runtime, name, spec and out must not be NULL");
    *out = kiln::c::handle_of(runtime->rt.kernel(name, spec->spec, mode_of(mode)));
  });
}

kiln_status kiln_kernels_get(kiln_runtime* runtime, const kiln_request* requests, size_t count, kiln_kernel* out) {
  return guard([&] {
    require(runtime && (count == 0 || (requests && out)), "kiln_kernels_get: runtime, requests and out must not be NULL");
    const std::vector<kiln::KernelRequest> wanted = kiln::c::requests_of(requests, count);
    const std::vector<kiln::Kernel> got = runtime->rt.kernels(wanted);
    for (std::size_t i = 0; i < count; ++i) out[i] = kiln::c::handle_of(got[i]);
  });
}

kiln_status kiln_flat_table(const kiln_arg* idx, const kiln_arg* blk, const kiln_arg* table) {
  return guard([&] {
    require(idx && blk && table, "kiln_flat_table: idx, blk and table must not be NULL");
    kiln::flat_table(*idx, *blk, *table);
  });
}

kiln_status kiln_call(kiln_kernel kernel, const kiln_arg* args, size_t count) {
  return guard([&] {
    require(kernel != nullptr, "kiln_call: the kernel is NULL (not resolved?)");
    require(args != nullptr || count == 0, "kiln_call: args must not be NULL");
    kiln::c::kernel_of(kernel).invoke(std::span<const kiln_arg>(args, count));
  });
}
kiln_status kiln_call_pointers(kiln_kernel kernel, const kiln_arg* const* args, size_t count) {
  return guard([&] {
    require(kernel != nullptr, "kiln_call_pointers: the kernel is NULL (not resolved?)");
    require(args != nullptr || count == 0, "kiln_call_pointers: args must not be NULL");
    for (std::size_t i = 0; i < count; ++i)
      if (args[i] == nullptr) require(false, "kiln_call_pointers: argument " + std::to_string(i) + " is NULL");
    kiln::c::kernel_of(kernel).invoke(args, count);
  });
}

kiln_status kiln_array(void* data, kiln_type type, int rank, const int64_t* shape, const int64_t* strides,
                       kiln_arg* out) {
  return make_array(data, type, rank, shape, strides, out);
}
kiln_status kiln_array_f(void* data, kiln_type type, int rank, const int64_t* shape, kiln_arg* out) {
  return make_array(data, type, rank, shape, Order::fortran, out);
}
kiln_status kiln_array_c(void* data, kiln_type type, int rank, const int64_t* shape, kiln_arg* out) {
  return make_array(data, type, rank, shape, Order::c, out);
}
kiln_arg kiln_scalar_f64(double value) { return kiln::scalar(value); }
kiln_arg kiln_scalar_f32(float value) { return kiln::scalar(value); }
kiln_arg kiln_scalar_i64(int64_t value) { return kiln::scalar(static_cast<std::int64_t>(value)); }
kiln_arg kiln_scalar_i32(int32_t value) { return kiln::scalar(static_cast<std::int32_t>(value)); }
kiln_arg kiln_scalar_bool(int value) { return kiln::scalar(value != 0); }

kiln_status kiln_declaration_get(const kiln_runtime* runtime, const char* name, kiln_declaration** out) {
  return guard([&] {
    require(runtime && name && out, "kiln_declaration_get: runtime, name and out must not be NULL");
    *out = new kiln_declaration{runtime->rt.declaration(name)};
  });
}
void kiln_declaration_destroy(kiln_declaration* declaration) { delete declaration; }
size_t kiln_declaration_argument_count(const kiln_declaration* declaration) {
  return declaration ? declaration->declaration.arguments.size() : 0;
}
kiln_status kiln_declaration_argument(const kiln_declaration* declaration, size_t i, const char** name,
                                      kiln_type* type, int* rank) {
  return guard([&] {
    require(declaration != nullptr, "kiln_declaration_argument: declaration must not be NULL");
    const auto& args = declaration->declaration.arguments;
    require(i < args.size(), "kernel '" + declaration->declaration.name + "' has " + std::to_string(args.size()) +
                                 " arguments, not " + std::to_string(i + 1));
    if (name) *name = args[i].name.c_str();
    if (type) *type = type_of(args[i].type);
    if (rank) *rank = args[i].rank;
  });
}
size_t kiln_declaration_parameter_count(const kiln_declaration* declaration) {
  return declaration ? declaration->declaration.parameters.size() : 0;
}
kiln_status kiln_declaration_parameter(const kiln_declaration* declaration, size_t i, const char** name,
                                       kiln_type* type, int* domain) {
  return guard([&] {
    require(declaration != nullptr, "kiln_declaration_parameter: declaration must not be NULL");
    const auto& params = declaration->declaration.parameters;
    require(i < params.size(), "kernel '" + declaration->declaration.name + "' has " + std::to_string(params.size()) +
                                   " parameters, not " + std::to_string(i + 1));
    if (name) *name = params[i].name.c_str();
    if (type) *type = type_of(params[i].type);
    if (domain) *domain = params[i].domain ? 1 : 0;
  });
}

kiln_status kiln_metrics_json(const kiln_runtime* runtime, char** json_out) {
  return guard([&] {
    require(runtime && json_out, "kiln_metrics_json: runtime and json_out must not be NULL");
    const std::string json = runtime->rt.metrics().json();
    char* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *json_out = copy;
  });
}
kiln_status kiln_metrics_write(const kiln_runtime* runtime, const char* path) {
  return guard([&] {
    require(runtime && path, "kiln_metrics_write: runtime and path must not be NULL");
    std::ofstream file(path);
    file << runtime->rt.metrics().json() << '\n';
    file.close();
    if (!file) fail(KILN_ERROR, std::string("kiln_metrics_write: cannot write ") + path);
  });
}

kiln_status kiln_precompile(kiln_runtime* runtime, const char* name, const kiln_spec* spec, kiln_gpu_backend backend,
                            const char* arch, kiln_mode mode, char* key_out) {
  return guard([&] {
    require(runtime && name && spec && arch, "kiln_precompile: runtime, name, spec and arch must not be NULL");
    require(backend == KILN_CUDA || backend == KILN_HIP, "kiln_precompile: backend must be KILN_CUDA or KILN_HIP");
    const kiln::GpuTarget target{backend == KILN_CUDA ? kiln::GpuBackend::cuda : kiln::GpuBackend::hip, arch};
    const std::string key = runtime->rt.precompile(name, spec->spec, target, mode_of(mode));
    if (key_out) std::memcpy(key_out, key.c_str(), std::min<std::size_t>(key.size(), 32) + 1);
  });
}

}  // extern "C"

namespace kiln::c {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

}  // namespace kiln::c
