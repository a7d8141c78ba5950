// What resolving kernels together needs from a group of processes: who am
// I, how many are we, and a broadcast. kiln/mpi.hpp provides it over an MPI
// communicator; libkiln itself has no MPI dependency.
#pragma once

#include <vector>

#include "kiln/export.hpp"

namespace kiln {

class KILN_API Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every member calls it with the same root, and afterwards
  // every member's `bytes` holds what the root's held.
  virtual void broadcast(std::vector<char>& bytes, int root) = 0;
};

}  // namespace kiln
