#include "errors.hpp"

#include <exception>
#include <new>
#include <string>

#include <nanobind/stl/string.h>

#include "kiln/errors.hpp"

namespace nb = nanobind;

namespace kiln::python {
namespace {

// The Python classes, looked up once by define_errors and kept for the life
// of the process (an extension module is never unloaded), by ErrorKind.
struct ErrorClasses {
  PyObject* of_kind[kErrorKinds] = {};
};
ErrorClasses classes;

// The class `name` of kiln.errors, kept for the life of the process.
PyObject* error_class(nb::module_& errors, const char* name) { return nb::object(errors.attr(name)).release().ptr(); }

// A message as str: compiler output may hold bytes that are not UTF-8.
nb::object text(const std::string& message) {
  return nb::steal(PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace"));
}

void raise(PyObject* type, const std::exception& e) { PyErr_SetObject(type, text(e.what()).ptr()); }

// CompileError carries the compiler's messages apart, as C++'s diagnostics().
void raise_compile_error(const CompileError& e) {
  PyObject* compile = classes.of_kind[static_cast<int>(ErrorKind::compile)];
  nb::object instance =
      nb::steal(PyObject_CallFunctionObjArgs(compile, text(e.what()).ptr(), text(e.diagnostics()).ptr(), nullptr));
  if (instance.is_valid()) PyErr_SetObject(compile, instance.ptr());  // else the call set its own error
}

// Each kind of kiln::Error maps to its Python twin (kiln.errors).
void translate(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const CompileError& e) {
    raise_compile_error(e);
  } catch (const Error& e) {
    raise(classes.of_kind[static_cast<int>(e.kind())], e);
  }
  // Anything else is left to nanobind's own translators (RuntimeError, MemoryError, ...).
}

}  // namespace

void set_python_error() noexcept {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const Error&) {
    translate(std::current_exception(), nullptr);
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "kiln: an unknown C++ exception");
  }
}

void define_errors(nb::module_& m) {
  // Defined in Python (kiln/errors.py), so that they are ordinary classes
  // with their docstrings and types, and raised from here.
  nb::module_ errors = nb::module_::import_("kiln.errors");
  for (int kind = 0; kind < kErrorKinds; ++kind)
    classes.of_kind[kind] = error_class(errors, error_kind_name(static_cast<ErrorKind>(kind)));
  nb::register_exception_translator(translate);
  m.def("_throw_error", [](int kind, const std::string& message) {
    if (kind < 0 || kind >= kErrorKinds) throw nb::value_error("no such error kind");
    throw_error(static_cast<ErrorKind>(kind), message, "the diagnostics");
  });
}

}  // namespace kiln::python
