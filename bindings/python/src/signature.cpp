#include "signature.hpp"

#include "kiln/errors.hpp"

namespace kiln::python {

std::string expected(const ArgumentInfo& info) {
  const std::string type(type_name(info.type));
  const char* article = info.type == ElementType::i32 || info.type == ElementType::i64 ? "an " : "a ";
  if (info.rank == 0) return article + type + " scalar";
  return article + type + " array of rank " + std::to_string(info.rank);
}

void refuse(const Signature& signature, std::size_t index, const std::string& what) {
  if (signature.example)
    throw SpecError("kiln: kernel '" + signature.kernel + "', strides_of '" + signature.arguments[index].name + "': " +
                    what);
  throw ArgumentError("kiln: kernel '" + signature.kernel + "', argument " + std::to_string(index) + " '" +
                      signature.arguments[index].name + "': " + what);
}

}  // namespace kiln::python
