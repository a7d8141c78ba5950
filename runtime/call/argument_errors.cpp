#include "runtime/call/argument_errors.hpp"

#include <string>

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

std::string describe(ElementType type, int rank) {
  std::string text(type_name(type));
  return rank == 0 ? text + " scalar" : text + " array of rank " + std::to_string(rank);
}

}  // namespace

void bad_count(const KernelInfo& kernel, std::size_t count) {
  std::string names;
  for (const auto& arg : kernel.args) names += (names.empty() ? "" : ", ") + arg.name;
  throw ArgumentError("kiln: kernel '" + kernel.name + "' takes " + std::to_string(kernel.args.size()) +
                      " arguments (" + names + "), got " + std::to_string(count));
}

void bad_arg(const KernelInfo& kernel, std::size_t index, const kiln_arg& got) {
  const auto& decl = kernel.args[index];
  throw ArgumentError("kiln: kernel '" + kernel.name + "', argument " + std::to_string(index) + " '" + decl.name +
                      "': expected a " + describe(decl.type, decl.rank) + ", got a " +
                      describe(static_cast<ElementType>(got.type), got.rank));
}

void bad_strides(const KernelInfo& kernel, std::size_t index, const kiln_arg& got) {
  std::string strides;
  for (int d = 0; d < got.rank; ++d) strides += (d ? ", " : "") + std::to_string(got.strides[d]);
  throw ArgumentError("kiln: kernel '" + kernel.name + "', argument '" + kernel.args[index].name + "': strides (" +
                      strides + ") differ from those it was specialised for");
}

}  // namespace kiln::runtime
