// kiln over MPI: a Communicator on an MPI communicator, for
// Runtime::kernels(requests, group). Header-only; link the CMake target
// kiln::mpi (kiln::kiln plus MPI).
//
//   kiln::MpiCommunicator group(MPI_COMM_WORLD);
//   std::vector<kiln::Kernel> ks = rt.kernels(requests, group);  // every rank, the same requests
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "kiln/collective.hpp"

namespace kiln {

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {}

  int rank() const override {
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    return rank;
  }
  int size() const override {
    int size = 0;
    MPI_Comm_size(comm_, &size);
    return size;
  }
  // The size first, then the bytes in chunks (MPI counts are ints).
  void broadcast(std::vector<char>& bytes, int root) override {
    std::uint64_t size = bytes.size();
    MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm_);
    bytes.resize(size);
    for (std::uint64_t offset = 0; offset < size;) {
      const int chunk = static_cast<int>(std::min<std::uint64_t>(size - offset, INT_MAX));
      MPI_Bcast(bytes.data() + offset, chunk, MPI_BYTE, root, comm_);
      offset += static_cast<std::uint64_t>(chunk);
    }
  }

 private:
  MPI_Comm comm_;
};

}  // namespace kiln
