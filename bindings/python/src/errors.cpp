#include "errors.hpp"

#include <exception>
#include <new>
#include <string>

#include "kiln/errors.hpp"

namespace nb = nanobind;

namespace kiln::python {
namespace {

// The Python classes, looked up once by define_errors and kept for the life
// of the process (an extension module is never unloaded).
struct ErrorClasses {
  PyObject* error = nullptr;
  PyObject* unknown_kernel = nullptr;
  PyObject* kernel_source = nullptr;
  PyObject* spec = nullptr;
  PyObject* argument = nullptr;
  PyObject* compile = nullptr;
  PyObject* toolchain = nullptr;
  PyObject* load = nullptr;
  PyObject* gpu = nullptr;
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
  nb::object instance = nb::steal(PyObject_CallFunctionObjArgs(
      classes.compile, text(e.what()).ptr(), text(e.diagnostics()).ptr(), nullptr));
  if (instance.is_valid()) PyErr_SetObject(classes.compile, instance.ptr());  // else the call set its own error
}

// The most derived class first: each C++ class maps to its Python twin.
void translate(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const CompileError& e) {
    raise_compile_error(e);
  } catch (const UnknownKernelError& e) {
    raise(classes.unknown_kernel, e);
  } catch (const KernelSourceError& e) {
    raise(classes.kernel_source, e);
  } catch (const SpecError& e) {
    raise(classes.spec, e);
  } catch (const ArgumentError& e) {
    raise(classes.argument, e);
  } catch (const ToolchainError& e) {
    raise(classes.toolchain, e);
  } catch (const LoadError& e) {
    raise(classes.load, e);
  } catch (const GpuError& e) {
    raise(classes.gpu, e);
  } catch (const Error& e) {
    raise(classes.error, e);
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

void define_errors() {
  // Defined in Python (kiln/errors.py), so that they are ordinary classes
  // with their docstrings and types, and raised from here.
  nb::module_ errors = nb::module_::import_("kiln.errors");
  classes.error = error_class(errors, "Error");
  classes.unknown_kernel = error_class(errors, "UnknownKernelError");
  classes.kernel_source = error_class(errors, "KernelSourceError");
  classes.spec = error_class(errors, "SpecError");
  classes.argument = error_class(errors, "ArgumentError");
  classes.compile = error_class(errors, "CompileError");
  classes.toolchain = error_class(errors, "ToolchainError");
  classes.load = error_class(errors, "LoadError");
  classes.gpu = error_class(errors, "GpuError");
  nb::register_exception_translator(translate);
}

}  // namespace kiln::python
