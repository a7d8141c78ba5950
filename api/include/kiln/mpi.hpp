// kiln over MPI: a Communicator on an MPI communicator, for
// Runtime::kernels(requests, group). Header-only; link the CMake target
// kiln::mpi (kiln::kiln plus MPI).
//
//   kiln::MpiCommunicator group(MPI_COMM_WORLD);
//   std::vector<kiln::Kernel> ks = rt.kernels(requests, group);  // every rank, each its own requests
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
  // Sizes first, then one MPI_Allgatherv; a total past INT_MAX bytes (MPI
  // counts are ints) falls back to one broadcast per rank.
  std::vector<std::vector<char>> gather_all(const std::vector<char>& mine) override {
    const int n = size();
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(n));
    std::uint64_t own = mine.size();
    MPI_Allgather(&own, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_);
    std::uint64_t total = 0;
    for (std::uint64_t s : sizes) total += s;
    if (total > static_cast<std::uint64_t>(INT_MAX)) return Communicator::gather_all(mine);
    std::vector<int> counts(sizes.begin(), sizes.end()), offsets(static_cast<std::size_t>(n), 0);
    for (int r = 1; r < n; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<char> joined(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), static_cast<int>(own), MPI_BYTE, joined.data(), counts.data(), offsets.data(),
                   MPI_BYTE, comm_);
    std::vector<std::vector<char>> all(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      all[r].assign(joined.begin() + offsets[r], joined.begin() + offsets[r] + counts[r]);
    return all;
  }

 private:
  MPI_Comm comm_;
};

}  // namespace kiln
