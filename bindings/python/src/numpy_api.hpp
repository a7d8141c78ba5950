// NumPy's C API, shared by this module's files: one table of functions,
// imported once by the module (module.cpp defines KILN_PYTHON_IMPORT_NUMPY).
// The call path reads an ndarray's fields directly through it, which costs a
// few nanoseconds an array, against the buffer or DLPack protocols' hundreds.
#pragma once

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL kiln_python_numpy_api
#ifndef KILN_PYTHON_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <Python.h>
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
