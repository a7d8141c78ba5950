#include "runtime/call/argument_errors.hpp"

#include <string>

#include "kiln/errors.hpp"
#include "lang/binder.hpp"

namespace kiln::runtime {
namespace {

// With its article: "an int32 scalar", "a double array of rank 2".
std::string describe(ElementType type, int rank) {
  std::string text(type_name(type));
  text = (text.front() == 'i' ? "an " : "a ") + text;
  return rank == 0 ? text + " scalar" : text + " array of rank " + std::to_string(rank);
}

}  // namespace

void bad_count(const lang::KernelInfo& kernel, std::size_t count) {
  std::string names;
  for (const auto& arg : kernel.args) names += (names.empty() ? "" : ", ") + arg.name;
  throw ArgumentError("kiln: kernel '" + kernel.name + "' takes " + std::to_string(kernel.args.size()) +
                      " arguments (" + names + "), got " + std::to_string(count));
}

void bad_arg(const lang::KernelInfo& kernel, std::size_t index, const kiln_arg& got, std::int64_t nproma) {
  const auto& decl = kernel.args[index];
  std::string expected = describe(decl.type, lang::passed_rank(decl.rank, nproma));
  if (nproma != lang::kFlat)
    expected += " (declared of rank " + std::to_string(decl.rank) + ", specialised blocked: nproma, ..., nblks)";
  throw ArgumentError("kiln: kernel '" + kernel.name + "', argument " + std::to_string(index) + " '" + decl.name +
                      "': expected " + expected + ", got " +
                      describe(static_cast<ElementType>(got.type), got.rank));
}

void bad_strides(const lang::KernelInfo& kernel, std::size_t index, const kiln_arg& got,
                 const std::optional<Spec::Strides>& fixed, std::int64_t nproma, std::int64_t nblks) {
  const std::string where = "kiln: kernel '" + kernel.name + "', argument '" + kernel.args[index].name + "': ";
  if (nproma > 0 && got.shape[0] != nproma)
    throw ArgumentError(where + "blocks of nproma " + std::to_string(got.shape[0]) + " (its first extent), " +
                        "specialised for nproma " + std::to_string(nproma));
  if (nblks > 0 && got.shape[got.rank - 1] != nblks)
    throw ArgumentError(where + std::to_string(got.shape[got.rank - 1]) + " blocks (its last extent), specialised for " +
                        std::to_string(nblks));
  std::string strides, expected;
  for (int d = 0; d < got.rank; ++d) strides += (d ? ", " : "") + std::to_string(got.strides[d]);
  if (fixed)
    for (std::size_t d = 0; d < fixed->size(); ++d) expected += (d ? ", " : "") + std::to_string((*fixed)[d]);
  throw ArgumentError(where + "strides (" + strides + ") differ from those it was specialised for (" + expected +
                      ")");
}

}  // namespace kiln::runtime
