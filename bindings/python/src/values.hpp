// Python values in messages and as C++ numbers.
#pragma once

#include <optional>
#include <string>

#include <nanobind/nanobind.h>

namespace kiln::python {

// A Python integer (int, NumPy integer, anything with __index__) as a C++ one,
// or nothing when it does not fit: nb::cast threw std::bad_cast for 2**63,
// which told the user nothing.
inline std::optional<long long> int64_of(nanobind::handle value) {
  nanobind::object integer = nanobind::steal(PyNumber_Index(value.ptr()));
  int overflow = 0;
  const long long number = integer.is_valid() ? PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow) : 0;
  if (!integer.is_valid() || overflow != 0 || (number == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return number;
}

// "an int", "a str", "a numpy.ndarray": the value's type with its article.
inline std::string type_of(nanobind::handle value) {
  const std::string name = Py_TYPE(value.ptr())->tp_name;
  return (name.find_first_of("aeiouAEIOU") == 0 ? "an " : "a ") + name;
}

}  // namespace kiln::python
