#include "runtime/kernels/cache_key.hpp"

#include <optional>
#include <string>

#include "lang/identity.hpp"
#include "lang/prelude.hpp"

namespace kiln::runtime {

std::string_view codegen_identity() { return lang::codegen_digest(); }

namespace {

// The key's leading fields, which every key of a process shares (its format,
// target, toolchain and flags), and the builder's state after them: each key
// then hashes only its own five fields into a copy (35 of 60 hash updates
// saved: ~2.2K instructions of each warm kernel). One per thread, for the last
// such fields seen; any of them differing hashes them anew.
struct SharedFields {
  std::int64_t format_version = 0;
  std::string backend, triple, cpu, features, toolchain, flags;
  std::optional<cache::KeyBuilder> builder;

  bool hold(const KeyInputs& in) const {
    return builder && format_version == in.format_version && backend == in.backend && triple == in.triple &&
           cpu == in.cpu && features == in.features && toolchain == in.toolchain && flags == in.flags;
  }
  void take(const KeyInputs& in) {
    format_version = in.format_version;
    backend = in.backend;
    triple = in.triple;
    cpu = in.cpu;
    features = in.features;
    toolchain = in.toolchain;
    flags = in.flags;
    builder.emplace();
    builder->add("format_version", in.format_version)
        .add("backend", in.backend)
        .add("triple", in.triple)
        .add("cpu", in.cpu)
        .add("features", in.features)
        .add("toolchain", in.toolchain)
        .add("flags", in.flags);
  }
};

}  // namespace

// The fields in this order make the key (stored keys depend on it): the shared ones first.
cache::Key compute_key(const KeyInputs& in) {
  thread_local SharedFields shared;
  if (!shared.hold(in)) shared.take(in);
  cache::KeyBuilder builder(*shared.builder);
  builder.add("mode", in.mode)
      .add("prelude", in.prelude)
      .add("kernel_source", in.kernel_source)
      .add("specialisation", in.specialisation)
      .add("codegen", in.codegen);
  return builder.finish();
}

std::string text_digest(std::string_view text) { return cache::KeyBuilder().add("text", text).finish().hex(); }

std::string_view prelude_digest() {
  static const std::string digest = text_digest(lang::prelude());
  return digest;
}

}  // namespace kiln::runtime
