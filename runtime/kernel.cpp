// kiln::Kernel: the hot path. A call checks the argument count, types and
// ranks (a few compares), then calls the entry; timing only when configured.
#include <chrono>

#include "kiln/errors.hpp"
#include "kiln/kernel.hpp"
#include "runtime/resolved_kernel.hpp"

namespace kiln {
namespace {

[[noreturn]] void bad_count(const detail::ResolvedKernel& k, std::size_t count) {
  std::string names;
  for (const auto& arg : k.info->args) names += (names.empty() ? "" : ", ") + arg.name;
  throw ArgumentError("kiln: kernel '" + k.info->name + "' takes " + std::to_string(k.info->args.size()) +
                      " arguments (" + names + "), got " + std::to_string(count));
}

std::string describe(ElementType type, int rank) {
  std::string text(runtime::type_name(type));
  return rank == 0 ? text + " scalar" : text + " array of rank " + std::to_string(rank);
}

[[noreturn]] void bad_arg(const detail::ResolvedKernel& k, std::size_t i, const kiln_arg& got) {
  const auto& decl = k.info->args[i];
  throw ArgumentError("kiln: kernel '" + k.info->name + "', argument " + std::to_string(i) + " '" + decl.name +
                      "': expected a " + describe(decl.type, decl.rank) + ", got a " +
                      describe(static_cast<ElementType>(got.type), got.rank));
}

[[noreturn]] void bad_strides(const detail::ResolvedKernel& k, std::size_t i, const kiln_arg& got) {
  std::string strides;
  for (int d = 0; d < got.rank; ++d) strides += (d ? ", " : "") + std::to_string(got.strides[d]);
  throw ArgumentError("kiln: kernel '" + k.info->name + "', argument '" + k.info->args[i].name +
                      "': strides (" + strides + ") differ from those it was specialised for");
}

}  // namespace

void Kernel::invoke(const kiln_arg* args, std::size_t count) const {
  if (!resolved_) throw Error("kiln: call of an empty Kernel handle");
  const detail::ResolvedKernel& k = *resolved_;
  const auto& decls = k.info->args;
  if (count != decls.size()) bad_count(k, count);
  for (std::size_t i = 0; i < count; ++i)
    if (args[i].type != static_cast<std::int32_t>(decls[i].type) || args[i].rank != decls[i].rank) bad_arg(k, i, args[i]);
  int status;
  if (!k.metrics) {
    status = k.entry(args, k.params.data());
  } else {
    const auto start = std::chrono::steady_clock::now();
    status = k.entry(args, k.params.data());
    const double ms = runtime::ms_since(start);
    k.metrics->record(k.metrics_name, k.called.exchange(true) ? "run" : "first_call", ms);
  }
  if (status != 0) bad_strides(k, static_cast<std::size_t>(status - 1), args[status - 1]);
}

const std::string& Kernel::name() const { return resolved_->info->name; }
bool Kernel::specialised() const { return resolved_->specialised; }
std::string Kernel::key() const { return resolved_->key.hex(); }

}  // namespace kiln
