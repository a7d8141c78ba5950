#include "numpy_api.hpp"  // first: it includes Python.h

#include "arguments.hpp"

#include <climits>
#include <cstdint>
#include <string>

#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace kiln::python {
namespace {

constexpr std::int32_t kNone = 0;  // no kiln type

// kiln's type for a NumPy dtype number, kNone for any other (and for a
// dtype not in this machine's byte order, checked by the caller).
std::int32_t kiln_type_of(int type_num) {
  switch (type_num) {
    case NPY_DOUBLE: return static_cast<std::int32_t>(ElementType::f64);
    case NPY_FLOAT: return static_cast<std::int32_t>(ElementType::f32);
    case NPY_INT32: return static_cast<std::int32_t>(ElementType::i32);
    case NPY_LONG:  // int64 is NPY_LONG on LP64 Linux, NPY_LONGLONG elsewhere
    case NPY_LONGLONG: return sizeof(long long) == 8 ? static_cast<std::int32_t>(ElementType::i64) : kNone;
    case NPY_BOOL: return static_cast<std::int32_t>(ElementType::boolean);
    default: return kNone;
  }
}

// log2 of the element size: strides in bytes become strides in elements by a
// shift, not a division (8 of them per call of a 4-array kernel).
int size_shift(std::int32_t type) {
  switch (static_cast<ElementType>(type)) {
    case ElementType::f64:
    case ElementType::i64: return 3;
    case ElementType::f32:
    case ElementType::i32: return 2;
    case ElementType::boolean: return 0;
  }
  return 0;
}

std::string python_type_name(PyObject* value) { return Py_TYPE(value)->tp_name; }

std::string dtype_text(PyObject* array) {
  nb::object dtype = nb::handle(array).attr("dtype");
  return nb::cast<std::string>(nb::str(dtype));
}

[[noreturn]] void refuse_dtype(const Signature& signature, std::size_t index, const std::string& dtype) {
  refuse(signature, index,
         "dtype " + dtype + " is not one kiln takes (float64, float32, int32, int64, bool, native byte order)");
}

void check_rank(const Signature& signature, std::size_t index, std::int64_t ndim) {
  if (ndim < 1 || ndim > kMaxRank)
    refuse(signature, index, "an array of " + std::to_string(ndim) + " dimensions; kiln takes 1 to 4");
}

// Byte strides into element strides. NumPy counts an array whose strides
// are not whole elements as unaligned, which the caller refuses first.
void set_strides(const npy_intp* bytes, kiln_arg& out) {
  const int shift = size_shift(out.type);
  for (int d = 0; d < out.rank; ++d) out.strides[d] = bytes[d] >> shift;  // arithmetic: negative strides stay so
}

void clear_unused_dimensions(kiln_arg& out) {
  for (int d = out.rank; d < kMaxRank; ++d) out.shape[d] = out.strides[d] = 0;
}

std::int32_t dlpack_type(nb::dlpack::dtype dtype) {
  if (dtype.lanes != 1) return kNone;
  using Code = nb::dlpack::dtype_code;
  switch (static_cast<Code>(dtype.code)) {
    case Code::Float:
      return dtype.bits == 64 ? static_cast<std::int32_t>(ElementType::f64)
             : dtype.bits == 32 ? static_cast<std::int32_t>(ElementType::f32)
                                : kNone;
    case Code::Int:
      return dtype.bits == 64 ? static_cast<std::int32_t>(ElementType::i64)
             : dtype.bits == 32 ? static_cast<std::int32_t>(ElementType::i32)
                                : kNone;
    case Code::Bool: return dtype.bits == 8 ? static_cast<std::int32_t>(ElementType::boolean) : kNone;
    default: return kNone;
  }
}

// Any array but NumPy's: through __dlpack__ (or a DLPack capsule), CPU only.
void convert_dlpack(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out,
                    std::vector<DlpackArray>& imports) {
  DlpackArray array;
  if (!nb::try_cast(nb::handle(value), array, /*convert=*/false))
    refuse(signature, index,
           "expected " + expected(signature.arguments[index]) + " (a NumPy array or an object with __dlpack__), got " +
               python_type_name(value));
  if (array.device_type() != nb::device::cpu::value)
    refuse(signature, index,
           "the array lives on DLPack device type " + std::to_string(array.device_type()) +
               "; kiln's CPU kernels take CPU arrays only");
  out.type = dlpack_type(array.dtype());
  if (out.type == kNone)
    refuse(signature, index,
           "DLPack dtype (code " + std::to_string(array.dtype().code) + ", " + std::to_string(array.dtype().bits) +
               " bits) is not one kiln takes (float64, float32, int32, int64, bool)");
  check_rank(signature, index, static_cast<std::int64_t>(array.ndim()));
  out.rank = static_cast<std::int32_t>(array.ndim());
  out.data = const_cast<void*>(static_cast<const void*>(array.data()));
  if (reinterpret_cast<std::uintptr_t>(out.data) % element_size(static_cast<ElementType>(out.type)) != 0)
    refuse(signature, index, "the array's data is not aligned to its element size");
  // A producer may leave strides out for a C-ordered array (DLPack's rule).
  std::int64_t step = 1;
  for (int d = out.rank - 1; d >= 0; --d) {
    out.shape[d] = array.shape_ptr()[d];
    out.strides[d] = array.stride_ptr() != nullptr ? array.stride_ptr()[d] : step;
    step *= out.shape[d];
  }
  clear_unused_dimensions(out);
  out.scalar.i64 = 0;
  imports.push_back(std::move(array));
}

bool is_bool(PyObject* value) { return PyBool_Check(value) || PyObject_TypeCheck(value, &PyBoolArrType_Type); }

double float_value(const Signature& signature, std::size_t index, PyObject* value) {
  if (PyFloat_Check(value)) return PyFloat_AS_DOUBLE(value);
  if (is_bool(value) || PyArray_Check(value) || !PyNumber_Check(value))
    refuse(signature, index, "expected " + expected(signature.arguments[index]) + ", got " + python_type_name(value));
  const double number = PyFloat_AsDouble(value);  // ints, NumPy's float32, anything with __float__
  if (number == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return number;
}

std::int64_t integer_value(const Signature& signature, std::size_t index, PyObject* value) {
  // Only whole numbers: a float (even 2.0) is a mistake for an integer argument.
  nb::object integer;
  if (!is_bool(value) && !PyArray_Check(value)) integer = nb::steal(PyNumber_Index(value));
  if (!integer.is_valid()) {
    PyErr_Clear();
    refuse(signature, index, "expected " + expected(signature.arguments[index]) + ", got " + python_type_name(value));
  }
  int overflow = 0;
  const long long number = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  const bool int32 = signature.arguments[index].type == ElementType::i32;
  if (overflow != 0 || (int32 && (number < INT32_MIN || number > INT32_MAX)))
    refuse(signature, index,
           nb::cast<std::string>(nb::str(integer)) + " does not fit " + expected(signature.arguments[index]));
  return number;
}

}  // namespace

bool convert_numpy(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out) {
  if (!PyArray_Check(value)) return false;
  auto* array = reinterpret_cast<PyArrayObject*>(value);
  out.type = kiln_type_of(PyArray_TYPE(array));
  if (out.type == kNone || !PyArray_ISNOTSWAPPED(array)) refuse_dtype(signature, index, dtype_text(value));
  const int ndim = PyArray_NDIM(array);
  check_rank(signature, index, ndim);
  if (!PyArray_ISALIGNED(array))  // its data, or a stride that is no whole number of elements
    refuse(signature, index, "the array's data is not aligned to its element size");
  out.rank = ndim;
  out.data = PyArray_DATA(array);
  const npy_intp* shape = PyArray_DIMS(array);
  for (int d = 0; d < ndim; ++d) out.shape[d] = shape[d];
  set_strides(PyArray_STRIDES(array), out);
  clear_unused_dimensions(out);
  out.scalar.i64 = 0;
  return true;
}

void convert_scalar(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out) {
  const ElementType type = signature.arguments[index].type;
  out = kiln_arg{};
  out.type = static_cast<std::int32_t>(type);
  switch (type) {
    case ElementType::f64: out.scalar.f64 = float_value(signature, index, value); break;
    case ElementType::f32:  // rounded to float, as kiln::scalar(float) passes it
      out.scalar.f64 = static_cast<double>(static_cast<float>(float_value(signature, index, value)));
      break;
    case ElementType::i32:
    case ElementType::i64: out.scalar.i64 = integer_value(signature, index, value); break;
    case ElementType::boolean:
      if (!is_bool(value))
        refuse(signature, index, "expected a bool scalar, got " + python_type_name(value));
      out.scalar.i64 = PyObject_IsTrue(value);
      break;
  }
}

void convert_argument(const Signature& signature, std::size_t index, PyObject* value, kiln_arg& out,
                      std::vector<DlpackArray>& imports) {
  if (signature.arguments[index].rank == 0) return convert_scalar(signature, index, value, out);
  if (convert_numpy(signature, index, value, out)) return;
  convert_dlpack(signature, index, value, out, imports);
}

}  // namespace kiln::python
