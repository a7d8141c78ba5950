// What the C ABI's opaque handles are, and guard(): the one place where C++
// exceptions become a kiln_status and this thread's message. Shared by the
// C ABI (kiln_c.cpp) and its MPI part (kiln_c_mpi.cpp).
#pragma once

#include <bit>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/kiln.hpp"

struct kiln_config {
  kiln::Config config;
};

struct kiln_runtime {
  kiln_runtime() = default;
  explicit kiln_runtime(kiln::Config config) : rt(std::move(config)) {}
  kiln::Runtime rt;
  // Names handed out to C (kiln_register_kernel's name_out) live as long as the runtime.
  const char* keep(const std::string& name) {
    std::lock_guard lock(names_mutex);
    return names.emplace_back(name).c_str();
  }
  std::mutex names_mutex;
  std::deque<std::string> names;  // deque: the strings never move
};

struct kiln_spec {
  kiln::Spec spec;
};

struct kiln_declaration {
  kiln::KernelDeclaration declaration;
};

namespace kiln::c {

// The failure of a call through the C ABI that is not a kiln exception.
struct Failure {
  kiln_status status;
  std::string message;
};

[[noreturn]] inline void fail(kiln_status status, std::string message) { throw Failure{status, std::move(message)}; }
// `what` is a view, so that the calls on the hot path (kiln_call) build no
// string unless they fail: a std::string per check was ~90 ns a call.
inline void require(bool ok, std::string_view what) {
  if (!ok) fail(KILN_ERROR_INVALID_ARGUMENT, "kiln: " + std::string(what));
}

// This thread's message. Exported (not part of kiln.h) for libkiln_c_mpi, whose
// calls report through the same kiln_last_error().
__attribute__((visibility("default"))) std::string& last_error();

// The status of each kind of kiln::Error (kiln/errors.hpp): kiln_status's
// codes from KILN_ERROR_UNKNOWN_KERNEL on follow ErrorKind's order.
constexpr kiln_status status_of(ErrorKind kind) {
  return kind == ErrorKind::error ? KILN_ERROR
                                  : static_cast<kiln_status>(KILN_ERROR_UNKNOWN_KERNEL - 1 + static_cast<int>(kind));
}
static_assert(status_of(ErrorKind::unknown_kernel) == KILN_ERROR_UNKNOWN_KERNEL &&
              status_of(ErrorKind::kernel_source) == KILN_ERROR_KERNEL_SOURCE &&
              status_of(ErrorKind::spec) == KILN_ERROR_SPEC && status_of(ErrorKind::argument) == KILN_ERROR_ARGUMENT &&
              status_of(ErrorKind::compile) == KILN_ERROR_COMPILE &&
              status_of(ErrorKind::toolchain) == KILN_ERROR_TOOLCHAIN && status_of(ErrorKind::load) == KILN_ERROR_LOAD &&
              status_of(ErrorKind::gpu) == KILN_ERROR_GPU);

// Runs `body`, returns KILN_OK, or the status of what it threw with its
// message kept in last_error(). Nothing escapes.
template <class Body>
kiln_status guard(Body&& body) noexcept {
  kiln_status status = KILN_OK;
  std::string message;
  try {
    body();
    return KILN_OK;
  } catch (const Failure& f) {
    status = f.status, message = f.message;
  } catch (const Error& e) {
    status = status_of(e.kind()), message = e.what();
  } catch (const std::bad_alloc&) {
    status = KILN_ERROR_OUT_OF_MEMORY, message = "kiln: out of memory";
  } catch (const std::exception& e) {
    status = KILN_ERROR_INTERNAL, message = std::string("kiln: internal error: ") + e.what();
  } catch (...) {
    status = KILN_ERROR_INTERNAL, message = "kiln: internal error: an unknown exception";
  }
  try {
    last_error() = std::move(message);
  } catch (...) {  // no memory for the message: the status still says what happened
  }
  return status;
}

// A kiln::Kernel is one pointer (to what the runtime resolved), valid while
// the runtime lives: the C handle is that pointer, so resolving allocates nothing.
static_assert(sizeof(Kernel) == sizeof(kiln_kernel) && std::is_trivially_copyable_v<Kernel>);
inline kiln_kernel handle_of(const Kernel& kernel) { return std::bit_cast<kiln_kernel>(kernel); }
inline Kernel kernel_of(kiln_kernel handle) { return std::bit_cast<Kernel>(handle); }

inline std::vector<KernelRequest> requests_of(const kiln_request* requests, std::size_t count) {
  std::vector<KernelRequest> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const kiln_request& r = requests[i];
    require(r.name && r.spec, "request " + std::to_string(i) + ": name and spec must not be NULL");
    require(r.mode == KILN_SPECIALISED || r.mode == KILN_GENERIC,
            "request " + std::to_string(i) + ": mode must be KILN_SPECIALISED or KILN_GENERIC");
    out.push_back({r.name, r.spec->spec, r.mode == KILN_SPECIALISED ? Mode::specialised : Mode::generic});
  }
  return out;
}

}  // namespace kiln::c
