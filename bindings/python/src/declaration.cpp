#include "declaration.hpp"

#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "kiln/runtime.hpp"

namespace nb = nanobind;

namespace kiln::python {
namespace {

std::string type_text(ElementType type) { return std::string(type_name(type)); }

}  // namespace

void define_declaration(nb::module_& m) {
  nb::class_<KernelArgument>(m, "Argument", "One argument of a kernel call, in declaration order.")
      .def_ro("name", &KernelArgument::name, "Its name in the kernel's text.")
      .def_prop_ro("type", [](const KernelArgument& a) { return type_text(a.type); },
                   "Its element type: 'double', 'float', 'int32', 'int64' or 'bool'.")
      .def_ro("rank", &KernelArgument::rank, "1 to 4 for an array, 0 for a scalar.")
      .def("__repr__", [](const KernelArgument& a) {
        return "kiln.Argument(" + a.name + ": " + type_text(a.type) + ", rank " + std::to_string(a.rank) + ")";
      });

  nb::class_<KernelParameter>(m, "Parameter", "One value a specialisation must give.")
      .def_ro("name", &KernelParameter::name, "Its name.")
      .def_prop_ro("type", [](const KernelParameter& p) { return type_text(p.type); },
                   "'int64' for domain parameters; 'bool', 'int64' or 'double' for static ones.")
      .def_ro("domain", &KernelParameter::domain, "True for a domain parameter, False for a static one.")
      .def("__repr__", [](const KernelParameter& p) {
        return "kiln.Parameter(" + p.name + ": " + type_text(p.type) + (p.domain ? ", domain)" : ", static)");
      });

  nb::class_<KernelDeclaration>(m, "Declaration", "What a registered kernel declares (Runtime.declaration).")
      .def_ro("name", &KernelDeclaration::name, "The kernel's name.")
      .def_ro("arguments", &KernelDeclaration::arguments, "The call's arguments, in order.")
      .def_ro("parameters", &KernelDeclaration::parameters, "What a spec must give, in declaration order.")
      .def_ro("file", &KernelDeclaration::file, "The file it was registered from; '' for embedded kernels and text.")
      .def_ro("source_digest", &KernelDeclaration::source_digest, "The digest of its text, as cache keys take it.")
      .def("__repr__", [](const KernelDeclaration& d) {
        return "<kiln.Declaration " + d.name + ": " + std::to_string(d.arguments.size()) + " arguments, " +
               std::to_string(d.parameters.size()) + " parameters>";
      });
}

}  // namespace kiln::python
