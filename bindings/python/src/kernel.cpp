#include "kernel.hpp"

#include <algorithm>
#include <string>

#include <nanobind/stl/string.h>

#include "errors.hpp"
#include "kiln/errors.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace kiln::python {
namespace {

void check_count(const Signature& signature, std::size_t count) {
  if (count == signature.arguments.size()) return;
  std::string names;
  for (const ArgumentInfo& argument : signature.arguments) names += (names.empty() ? "" : ", ") + argument.name;
  throw ArgumentError("kiln: kernel '" + signature.kernel + "' takes " + std::to_string(signature.arguments.size()) +
                      " arguments (" + names + "), got " + std::to_string(count));
}

void call_with(const Kernel& kernel, const nb::args& args, int threads) {
  const Signature& signature = *kernel.signature;
  check_count(signature, args.size());
  CallBuffer buffer(args.size());
  std::vector<DlpackArray> imports;  // allocates only when an argument comes through DLPack
  for (std::size_t i = 0; i < args.size(); ++i)
    convert_argument(signature, i, PyTuple_GET_ITEM(args.ptr(), i), buffer[i], imports);
  run(kernel.handle, buffer, threads);
}

// Kernel and Bound are called through their type's tp_call slot, not a
// __call__ method: CPython then calls the slot with the argument tuple,
// where a method costs a lookup in the type, a bound method and nanobind's
// overload dispatch (~0.3 µs a call measured, more than the rest of a call).
template <class T>
PyObject* call_slot(PyObject* self, PyObject* args, PyObject* kwargs) noexcept {
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_Format(PyExc_TypeError, "%s takes no keyword arguments", Py_TYPE(self)->tp_name);
    return nullptr;
  }
  try {
    nb::inst_ptr<T>(self)->call(nb::borrow<nb::args>(args));
  } catch (...) {
    set_python_error();
    return nullptr;
  }
  Py_RETURN_NONE;
}

// A Bound holds its arguments, which may hold it (an array subclass given
// the Bound as an attribute): the cycle collector must see those references.
int bound_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));  // instances of heap types visit their type
  if (!nb::inst_ready(self)) return 0;
  const Bound* bound = nb::inst_ptr<Bound>(self);
  Py_VISIT(bound->kernel.ptr());
  Py_VISIT(bound->objects.ptr());
  return 0;
}

int bound_clear(PyObject* self) {
  Bound* bound = nb::inst_ptr<Bound>(self);
  bound->imports.clear();
  bound->objects = nb::tuple();
  bound->kernel.reset();  // a later call refuses (Bound::call), never reads what was freed
  bound->target = nullptr;
  return 0;
}

PyType_Slot kernel_slots[] = {{Py_tp_call, reinterpret_cast<void*>(&call_slot<Kernel>)}, {0, nullptr}};
PyType_Slot bound_slots[] = {{Py_tp_call, reinterpret_cast<void*>(&call_slot<Bound>)},
                             {Py_tp_traverse, reinterpret_cast<void*>(&bound_traverse)},
                             {Py_tp_clear, reinterpret_cast<void*>(&bound_clear)},
                             {0, nullptr}};

}  // namespace

void run(const kiln::Kernel& handle, const CallBuffer& buffer, int threads) {
  nb::gil_scoped_release unlocked;  // other Python threads run meanwhile; nothing here touches Python
  if (threads == 0) handle.invoke(buffer.pointers(), buffer.size());
  else handle.invoke_on(threads, buffer.pointers(), buffer.size());
}

void Kernel::call(nb::args args) const { call_with(*this, args, 0); }

// The upper bound (1024, as KILN_THREADS and Runtime(threads=)) is the C++
// call's (runtime/call/kernel.cpp): it names the kernel.
void Kernel::run_on(int threads, nb::args args) const {
  if (threads < 1) throw Error("kiln: run_on(threads, ...): threads must be 1 or more, got " + std::to_string(threads));
  call_with(*this, args, threads);
}

Bound bind(nb::handle self, nb::args args) {
  const Kernel& kernel = nb::cast<const Kernel&>(self);
  const Signature& signature = *kernel.signature;
  check_count(signature, args.size());
  Bound bound;
  bound.kernel = nb::borrow(self);
  bound.target = &kernel;
  bound.objects = nb::borrow<nb::tuple>(args);
  bound.args.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    PyObject* value = PyTuple_GET_ITEM(args.ptr(), i);
    if (signature.arguments[i].rank == 0) {
      convert_scalar(signature, i, value, bound.args[i]);
      bound.scalar_slots.push_back(i);
    } else if (convert_numpy(signature, i, value, bound.args[i])) {
      bound.numpy_slots.push_back(i);
    } else {
      convert_argument(signature, i, value, bound.args[i], bound.imports);  // through DLPack, held from now on
    }
  }
  return bound;
}

void Bound::call(nb::args scalars) const {
  if (target == nullptr) throw Error("kiln: this Bound was cleared by the garbage collector (it was part of a cycle)");
  const Signature& signature = *target->signature;
  if (scalars.size() != 0 && scalars.size() != scalar_slots.size())
    throw ArgumentError("kiln: kernel '" + signature.kernel + "', bound: a call takes no arguments, or new values for its " +
                        std::to_string(scalar_slots.size()) + " scalars, got " + std::to_string(scalars.size()));
  // A copy per call: threads calling one Bound at once never share what the kernel reads.
  CallBuffer buffer(args.size());
  std::copy(args.begin(), args.end(), buffer.args());
  for (std::size_t slot : numpy_slots)
    convert_numpy(signature, slot, PyTuple_GET_ITEM(objects.ptr(), slot), buffer[slot]);
  for (std::size_t i = 0; i < scalars.size(); ++i)
    convert_scalar(signature, scalar_slots[i], PyTuple_GET_ITEM(scalars.ptr(), i), buffer[scalar_slots[i]]);
  run(target->handle, buffer, 0);
}

void define_kernel(nb::module_& m) {
  nb::class_<Kernel>(m, "Kernel", nb::type_slots(kernel_slots),
                     "A resolved kernel, made by Runtime.kernel() and Runtime.kernels(); keeps its\n"
                     "Runtime alive. k(*args) runs it on NumPy arrays (any order or strides, never\n"
                     "copied), other CPU arrays through __dlpack__, and scalars, in declaration order.\n"
                     "The GIL is released while it runs. Raises ArgumentError naming the argument on\n"
                     "a wrong count, dtype, rank, shape (the declared extents) or strides (those\n"
                     "specialised).")
      .def("run_on", &Kernel::run_on, "threads"_a, "args"_a,
           nb::sig("def run_on(self, threads: int, /, *args: object) -> None"),
           "The same call on `threads` threads, whatever the Runtime's `threads` says.")
      .def("bind", &bind, nb::sig("def bind(self, *args: object) -> Bound"),
           "Binds the arguments for calls that repeat on the same arrays: returns a Bound\n"
           "that holds them (so they stay alive) and at each call re-reads only what can\n"
           "change (a NumPy array's data pointer, shape and strides).")
      .def_prop_ro("name", [](const Kernel& k) { return k.handle.name(); }, "The kernel's name.")
      .def_prop_ro("specialised", [](const Kernel& k) { return k.handle.specialised(); },
                   "True for a specialised build, False for a generic one.")
      .def_prop_ro("key", [](const Kernel& k) { return k.handle.key(); }, "The cache key, 32 hex digits.")
      .def_prop_ro("arguments",
                   [](const Kernel& k) {
                     nb::list names;
                     for (const ArgumentInfo& argument : k.signature->arguments) names.append(argument.name);
                     return nb::tuple(names);
                   },
                   nb::sig("def arguments(self) -> tuple[str, ...]"), "The arguments' names, in call order.")
      .def("__repr__", [](const Kernel& k) {
        return "<kiln.Kernel " + k.handle.name() + (k.handle.specialised() ? " (specialised)>" : " (generic)>");
      });

  nb::class_<Bound>(m, "Bound", nb::type_slots(bound_slots),
                    "A Kernel bound to its arguments (Kernel.bind); holds them, so they live as long\n"
                    "as it does. bound() runs the kernel on them; bound(*scalars) with new values for\n"
                    "all the kernel's scalar arguments, in order, for that call only.")
      .def_prop_ro("kernel", [](const Bound& b) { return b.kernel; }, nb::sig("def kernel(self) -> Kernel"),
                   "The bound Kernel.")
      .def_prop_ro("arguments", [](const Bound& b) { return b.objects; },
                   nb::sig("def arguments(self) -> tuple[object, ...]"), "The bound arguments.");
}

}  // namespace kiln::python
