// Python objects into kiln_args, without copying any array: NumPy arrays are
// read field by field (any order, any strides: C, Fortran, views), other
// arrays come through __dlpack__; scalars take the type their declaration says.
#pragma once

#include <cstddef>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "kiln/arg.hpp"
#include "signature.hpp"

namespace kiln::python {

// An array imported through DLPack: holding it keeps the producer's memory alive.
using DlpackArray = nanobind::ndarray<nanobind::ro>;

// Argument `index` of `signature`, given `value`, into `out`. An array that
// is neither a NumPy array nor a CPU DLPack producer, a dtype kiln does not
// take, a scalar of the wrong kind: ArgumentError naming the argument. A
// DLPack import is appended to `imports`, which must outlive the call.
void convert_argument(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out,
                      std::vector<DlpackArray>& imports);

// Re-reads a NumPy array argument (data, shape, strides may have changed
// since it was bound: ndarray.resize, assigning .shape). True when `value`
// is a NumPy array; throws ArgumentError when it no longer fits kiln.
bool convert_numpy(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out);

// Argument `index` (a scalar by its declaration) from `value`.
void convert_scalar(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out);

}  // namespace kiln::python
