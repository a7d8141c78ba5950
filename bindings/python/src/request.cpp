#include "numpy_api.hpp"  // first: it includes Python.h

#include "request.hpp"

#include <string>
#include <vector>

#include <nanobind/stl/string.h>

#include "arguments.hpp"
#include "values.hpp"
#include "kiln/errors.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace kiln::python {
namespace {

[[noreturn]] void bad_value(const std::string& kernel, const std::string& name, const std::string& what) {
  throw SpecError("kiln: kernel '" + kernel + "', parameter '" + name + "': " + what);
}

// Strides name an array, not a parameter.
[[noreturn]] void bad_strides(const std::string& kernel, const std::string& name, const std::string& what) {
  throw SpecError("kiln: kernel '" + kernel + "', array '" + name + "': " + what);
}

// A tuple or list of 1 to 4 integers: an array argument's strides, in elements.
void set_strides(Spec& spec, const std::string& kernel, const std::string& name, nb::handle value) {
  nb::sequence items = nb::borrow<nb::sequence>(value);
  const std::size_t rank = nb::len(items);
  if (rank < 1 || rank > static_cast<std::size_t>(kMaxRank))
    bad_strides(kernel, name, "strides need 1 to 4 values, got " + std::to_string(rank));
  kiln_arg view{};
  view.rank = static_cast<std::int32_t>(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    nb::handle item = items[d];
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr()))
      bad_strides(kernel, name, "strides must be integers (elements), got " + type_of(item));
    const std::optional<long long> stride = int64_of(item);
    if (!stride)
      bad_strides(kernel, name, "stride " + nb::cast<std::string>(nb::str(item)) + " does not fit a 64-bit integer");
    view.strides[d] = *stride;
  }
  spec.strides_of(name, view);
}

void set_value(Spec& spec, const std::string& kernel, const std::string& name, nb::handle value) {
  PyObject* v = value.ptr();
  if (PyBool_Check(v) || PyArray_IsScalar(v, Bool)) {
    spec.set(name, PyObject_IsTrue(v) == 1);
  } else if (PyFloat_Check(v) || PyArray_IsScalar(v, Floating)) {
    spec.set(name, nb::cast<double>(value));
  } else if (PyLong_Check(v) || PyArray_IsScalar(v, Integer)) {
    const std::optional<long long> number = int64_of(value);
    if (!number) bad_value(kernel, name, nb::cast<std::string>(nb::str(value)) + " does not fit a 64-bit integer");
    spec.set(name, *number);
  } else if (PyTuple_Check(v) || PyList_Check(v)) {
    set_strides(spec, kernel, name, value);
  } else {
    bad_value(kernel, name,
              type_of(value) +
                  " is none of bool, int, float, or a tuple of strides for an array argument");
  }
}

// An example array's strides, as Spec::strides_of takes them from a kiln_arg.
void set_strides_of(Spec& spec, const std::string& kernel, nb::handle examples) {
  if (!PyDict_Check(examples.ptr()))
    throw SpecError("kiln: kernel '" + kernel + "', strides_of: expected a dict {array name: example array}, got " +
                    type_of(examples));
  for (auto [key, array] : nb::borrow<nb::dict>(examples)) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    if (spec.find(name) != nullptr) throw SpecError("kiln: kernel '" + kernel + "', '" + name + "' is given twice");
    // One argument of rank 1 stands for "an array": convert_argument then takes any rank.
    const Signature example{kernel, {{name, ElementType::f64, 1}}, 0, /*example=*/true};
    kiln_arg view{};
    std::vector<DlpackArray> imports;
    convert_argument(example, 0, array.ptr(), view, imports);
    spec.strides_of(name, view);
  }
}

// ICON's blocked layout (docs/blocked_layout.md): {array name: nproma, or an
// example array of that layout, (nproma, ..., nblks), whose strides and block
// count are fixed too}. Calls then pass arrays of the declared rank plus one.
void set_blocked(Spec& spec, const std::string& kernel, nb::handle blocked) {
  if (!PyDict_Check(blocked.ptr()))
    throw SpecError("kiln: kernel '" + kernel + "', blocked: expected a dict {array name: nproma or example array}, "
                    "got " + type_of(blocked));
  for (auto [key, value] : nb::borrow<nb::dict>(blocked)) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    if (spec.find(name) != nullptr) throw SpecError("kiln: kernel '" + kernel + "', '" + name + "' is given twice");
    if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
      const std::optional<long long> nproma = int64_of(value);
      if (!nproma || *nproma < 1)
        bad_strides(kernel, name, "blocked: nproma must be 1 or more, got " + nb::cast<std::string>(nb::str(value)));
      spec.blocked(name, *nproma);
      continue;
    }
    const Signature example{kernel, {{name, ElementType::f64, 1}}, 0, /*example=*/true};
    kiln_arg view{};
    std::vector<DlpackArray> imports;
    convert_argument(example, 0, value.ptr(), view, imports);
    if (view.rank < 2)
      bad_strides(kernel, name, "blocked: an example array has its blocks last, (nproma, ..., nblks): got rank " +
                                    std::to_string(view.rank));
    spec.blocked_like(name, view);
  }
}

void set_run_time(Spec& spec, nb::handle run_time) {
  if (PyUnicode_Check(run_time.ptr())) {  // one name, not its letters
    spec.run_time(nb::cast<std::string>(run_time));
    return;
  }
  for (nb::handle name : run_time) spec.run_time(nb::cast<std::string>(nb::str(name)));
}

Mode mode_of(nb::handle mode) {
  Mode out{};
  if (nb::try_cast(mode, out, /*convert=*/false)) return out;
  if (PyUnicode_Check(mode.ptr())) {
    const std::string text = nb::cast<std::string>(mode);
    if (text == "specialised") return Mode::specialised;
    if (text == "generic") return Mode::generic;
  }
  throw Error("kiln: mode " + nb::cast<std::string>(nb::repr(mode)) +
              ": expected kiln.Mode.specialised, kiln.Mode.generic, 'specialised' or 'generic'");
}

}  // namespace

Request make_request(const std::string& name, nb::handle spec, nb::handle mode, nb::handle run_time,
                     nb::handle strides_of, const nb::kwargs& values, nb::handle blocked) {
  Request out{{name, Spec{}, mode_of(mode)}};
  Spec& built = out.request.spec;
  if (!spec.is_none()) {
    if (!PyDict_Check(spec.ptr()))
      throw SpecError("kiln: kernel '" + name + "': spec must be a dict {parameter: value}, got " +
                      type_of(spec));
    for (auto [key, value] : nb::borrow<nb::dict>(spec)) set_value(built, name, nb::cast<std::string>(nb::str(key)), value);
  }
  for (auto [key, value] : values) {
    const std::string parameter = nb::cast<std::string>(key);
    if (built.find(parameter) != nullptr)
      throw SpecError("kiln: kernel '" + name + "', parameter '" + parameter + "' is given twice");
    set_value(built, name, parameter, value);
  }
  if (!strides_of.is_none()) set_strides_of(built, name, strides_of);
  if (!blocked.is_none()) set_blocked(built, name, blocked);
  set_run_time(built, run_time);
  return out;
}

void define_request(nb::module_& m) {
  nb::enum_<Mode>(m, "Mode", "How a kernel is built: its values compiled in, or read at run time.")
      .value("specialised", Mode::specialised, "Specialisation values are compile-time constants.")
      .value("generic", Mode::generic, "The same source with every value read at run time: one binary for all.");

  nb::class_<Request>(m, "Request", "One kernel for Runtime.kernels(): the arguments of Runtime.kernel().")
      .def(
          "__init__",
          [](Request* self, const std::string& name, nb::handle spec, nb::handle mode, nb::handle run_time,
             nb::handle strides_of, nb::handle blocked, const nb::kwargs& values) {
            new (self) Request(make_request(name, spec, mode, run_time, strides_of, values, blocked));
          },
          "name"_a, "spec"_a = nb::none(), nb::kw_only(), "mode"_a = Mode::specialised, "run_time"_a = nb::tuple(),
          "strides_of"_a = nb::none(), "blocked"_a = nb::none(), "values"_a,
          nb::sig("def __init__(self, name: str, spec: dict[str, object] | None = None, *, "
                  "mode: Mode | str = 'specialised', run_time: str | collections.abc.Iterable[str] = (), "
                  "strides_of: dict[str, object] | None = None, blocked: dict[str, object] | None = None, "
                  "**values: object) -> None"))
      .def_prop_ro("name", [](const Request& r) { return r.request.name; }, "The kernel's name.")
      .def_prop_ro("mode", [](const Request& r) { return r.request.mode; }, "Its mode.")
      .def_prop_ro("spec", [](const Request& r) { return r.request.spec.to_json(); },
                   "The specialisation as JSON (run-time values listed under \"kiln_run_time\").")
      .def("__repr__", [](const Request& r) {
        return "kiln.Request(" + r.request.name + ", " + r.request.spec.to_json() + ")";
      });
}

}  // namespace kiln::python
