// kiln_mpi_bench: P ranks resolving the same M kernels on an empty cache,
// collectively (Runtime::kernels over MPI) and lazily (each rank on its own,
// Runtime::kernel one by one, sharing the cache through the build locks).
// Run under mpirun; bench/run_mpi_bench.sh runs P = 1, 2, 4.
//
//   mpirun -np P kiln_mpi_bench [--rounds R]
//
// Rank 0 prints one line per path: the median wall time (from a barrier to
// the last rank done) and the compiles summed over the ranks.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/process_kernels.hpp"
#include "kiln/kiln.hpp"
#include "kiln/mpi.hpp"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  double ms = 0;
  unsigned long long compiles = 0;
};

// A fresh, empty cache folder named by rank 0, the same on every rank.
fs::path fresh_cache(int rank, int round, const char* path_kind) {
  char name[256] = {};
  if (rank == 0) {
    std::snprintf(name, sizeof name, "%s/kiln-mpi-bench-%d-%s-%d", fs::temp_directory_path().c_str(), getpid(),
                  path_kind, round);
    fs::remove_all(name);
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  return name;
}

Outcome run(int rank, int round, bool collective) {
  kiln::Config config = kiln::Config::from_env();
  config.cache_dir = fresh_cache(rank, round, collective ? "collective" : "lazy");
  config.log_level = "error";
  std::vector<kiln::KernelRequest> requests;
  for (int i = 0; i < kiln_bench::kProcessKernels; ++i)
    requests.push_back({"update_theta_and_exner", kiln_bench::process_spec(i)});
  Outcome outcome;
  {
    kiln::Runtime rt(config);
    kiln::MpiCommunicator world(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (collective) {
      rt.kernels(requests, world);
    } else {
      for (const auto& r : requests) rt.kernel(r.name, r.spec);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    outcome.ms = (MPI_Wtime() - start) * 1e3;
    unsigned long long mine = rt.metrics().total().compiles;
    MPI_Allreduce(&mine, &outcome.compiles, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(config.cache_dir);
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int rounds = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
  for (const bool collective : {true, false}) {
    std::vector<double> walls;
    Outcome last;
    for (int r = 0; r < rounds; ++r) {
      last = run(rank, r, collective);
      walls.push_back(last.ms);
    }
    std::sort(walls.begin(), walls.end());
    if (rank == 0)
      std::printf("%d ranks x %d kernels, %-30s %9.1f ms %5llu compiles (median of %d)\n", ranks,
                  kiln_bench::kProcessKernels, collective ? "collective (Runtime::kernels)" : "lazy (per rank, locks)",
                  walls[walls.size() / 2], last.compiles, rounds);
  }
  MPI_Finalize();
  return 0;
}
