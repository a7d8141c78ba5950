// What resolving kernels together needs from a group of processes: who am
// I, how many are we, and a broadcast. kiln/mpi.hpp provides it over an MPI
// communicator; libkiln itself has no MPI dependency.
#pragma once

#include <cstddef>
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
  // Collective: every member gives its bytes, and gets every member's, in
  // member order. By default one broadcast per member; an MPI communicator
  // does it in one MPI_Allgatherv.
  virtual std::vector<std::vector<char>> gather_all(const std::vector<char>& mine) {
    std::vector<std::vector<char>> all(static_cast<std::size_t>(size()));
    for (int root = 0; root < size(); ++root) {
      std::vector<char>& bytes = all[static_cast<std::size_t>(root)];
      if (root == rank()) bytes = mine;
      broadcast(bytes, root);
    }
    return all;
  }
};

}  // namespace kiln
