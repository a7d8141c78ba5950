// kiln::Kernel's out-of-line half: the checked call (timing, and the errors
// that name what is wrong). The fast path is inline in kiln/kernel.hpp.
#include <chrono>
#include <vector>

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

void Kernel::invoke_checked(const kiln_arg* const* args, std::size_t count) const {
  if (!block_) throw Error("kiln: call of an empty Kernel handle");
  const detail::ResolvedKernel& k = *block_->owner;
  if (count != k.signature.size()) bad_count(k, count);
  for (std::size_t i = 0; i < count; ++i)
    if (detail::signature_of(*args[i]) != k.signature[i]) bad_arg(k, i, *args[i]);
  int status;
  if (!k.metrics) {
    status = k.call.entry(args, k.call.params);
  } else {
    const auto start = std::chrono::steady_clock::now();
    status = k.call.entry(args, k.call.params);
    const double ms = runtime::ms_since(start);
    k.metrics->record(k.metrics_name, k.called.exchange(true) ? "run" : "first_call", ms);
  }
  if (status != 0) refused(args, status);
}

void Kernel::refused(const kiln_arg* const* args, int status) const {
  const std::size_t index = static_cast<std::size_t>(status - 1);
  bad_strides(*block_->owner, index, *args[index]);
}

void Kernel::invoke(std::span<const kiln_arg> args) const {
  std::vector<const kiln_arg*> pointers(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) pointers[i] = &args[i];
  invoke(pointers.data(), pointers.size());
}

const std::string& Kernel::name() const { return block_->owner->info->name; }
bool Kernel::specialised() const { return block_->owner->specialised; }
std::string Kernel::key() const { return block_->owner->key.hex(); }

}  // namespace kiln
