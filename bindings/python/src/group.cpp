#include "group.hpp"

namespace nb = nanobind;

namespace kiln::python {

void define_group(nb::module_& m) {
  nb::class_<Communicator>(m, "Communicator",
                           "A group of processes that resolves kernels together (kiln/collective.hpp):\n"
                           "Runtime.kernels(requests, group). Made by kiln.mpi.communicator() from an\n"
                           "mpi4py communicator; Runtime.kernels also takes that communicator itself.")
      .def_prop_ro("rank", &Communicator::rank, "This process's place in the group, from 0.")
      .def_prop_ro("size", &Communicator::size, "How many processes the group has.");
}

Communicator& group_of(nb::handle group, nb::object& holder) {
  Communicator* made = nullptr;
  if (nb::try_cast(group, made, /*convert=*/false) && made != nullptr) {
    holder = nb::borrow(group);
    return *made;
  }
  holder = nb::module_::import_("kiln.mpi").attr("communicator")(group);
  return nb::cast<Communicator&>(holder);
}

}  // namespace kiln::python
