// Collective resolution over MPI, run under `mpirun -np 4` (run_mpi_test.sh):
// exact compile counts across ranks, the cache reads of each rank, correct
// outputs everywhere, and one error for all when a kernel does not compile.
#include <mpi.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <tuple>

#include "kiln/mpi.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {

constexpr int kKernels = 12;
const char* kName = "update_theta_and_exner";

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int ranks() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
std::uint64_t sum(std::uint64_t value) {
  std::uint64_t total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// A cache folder rank 0 makes and every rank uses.
class SharedDir {
 public:
  SharedDir() {
    std::string path(4096, '\0');
    if (rank() == 0) path = dir_.emplace().path().string();
    path.resize(4096);
    MPI_Bcast(path.data(), 4096, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path.c_str();
  }
  ~SharedDir() { MPI_Barrier(MPI_COMM_WORLD); }  // nobody still uses it when rank 0 removes it
  const std::filesystem::path& path() const { return path_; }

 private:
  std::optional<TempDir> dir_;
  std::filesystem::path path_;
};

// Every rank holds the same text (its hash's minimum and maximum agree).
void expect_the_same_on_every_rank(const std::string& what) {
  const std::uint64_t mine = std::hash<std::string>{}(what);
  std::uint64_t lowest = 0, highest = 0;
  MPI_Allreduce(&mine, &lowest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &highest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lowest, highest) << "ranks got different errors";
}

struct Twelve {
  std::vector<ThetaCase> cases;
  std::vector<KernelRequest> requests;
  Twelve() {
    for (int i = 0; i < kKernels; ++i) {
      cases.emplace_back(30, 5, i % 2 == 0, 40 + i);
      requests.push_back({kName, cases.back().spec(1, 29, 0, 5, 0.2 + 0.01 * i)});
    }
  }
  void check(const std::vector<Kernel>& kernels) {
    ASSERT_EQ(kernels.size(), cases.size());
    for (int i = 0; i < kKernels; ++i) {
      ThetaCase got = cases[i], want = cases[i];
      got.run(kernels[i]);
      want.reference(1, 29, 0, 5, 0.2 + 0.01 * i);
      expect_close(got.exner, want.exner);
      expect_close(got.theta_v, want.theta_v);
    }
  }
};

std::uint64_t disk_reads(const KernelMetrics& m) {
  const auto it = m.phases.find("disk_lookup");
  return it == m.phases.end() ? 0 : it->second.count;
}

// Cold: rank 0 reads every key (all misses); the 12 misses are dealt out, 3
// per rank of 4, and each rank re-reads its own under the build lock before
// compiling. Every rank receives the other 9 from its peers.
TEST(Collective, ColdCacheCompilesEachKernelOnceAcrossRanks) {
  SharedDir dir;
  Twelve twelve;
  Runtime rt(config_for(dir.path()));
  MpiCommunicator world(MPI_COMM_WORLD);
  twelve.check(rt.kernels(twelve.requests, world));
  const KernelMetrics m = rt.metrics().kernels.at(kName);
  const std::uint64_t share = kKernels / ranks() + (rank() < kKernels % ranks() ? 1 : 0);
  EXPECT_EQ(sum(m.compiles), static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(m.compiles, share);
  EXPECT_EQ(m.peer_hits, kKernels - share);
  EXPECT_EQ(m.disk_hits, 0u);
  // Rank 0 first looks for the union's bundle (docs/manual/cache.md, Bundles), then reads each kernel.
  EXPECT_EQ(disk_reads(m), (rank() == 0 ? kKernels + 1 : 0) + share);
}

// Warm: rank 0 alone reads the cache, one file: the union's bundle, which the
// filler's resolution wrote; the others get every binary from it.
TEST(Collective, WarmCacheIsReadByOneRankOnly) {
  SharedDir dir;
  Twelve twelve;
  {
    Runtime filler(config_for(dir.path()));
    MpiCommunicator world(MPI_COMM_WORLD);
    filler.kernels(twelve.requests, world);
  }
  Runtime rt(config_for(dir.path()));
  MpiCommunicator world(MPI_COMM_WORLD);
  twelve.check(rt.kernels(twelve.requests, world));
  const KernelMetrics m = rt.metrics().kernels.at(kName);
  EXPECT_EQ(sum(m.compiles), 0u);
  EXPECT_EQ(m.disk_hits, rank() == 0 ? static_cast<std::uint64_t>(kKernels) : 0u);
  EXPECT_EQ(m.peer_hits, rank() == 0 ? 0u : static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(disk_reads(m), rank() == 0 ? 1u : 0u);
}

// One kernel does not compile: every rank throws the same CompileError, and
// the job goes on (the barrier after it is reached by all).
TEST(Collective, AKernelThatDoesNotCompileFailsOnEveryRankAlike) {
  SharedDir dir;
  Twelve twelve;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel("#pragma kiln kernel broken\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
                     "kiln::for_each_column(0, n, [&](kiln::index_t c) { x(c) = undefined_name; });\n",
                     "broken.kiln");
  std::vector<KernelRequest> requests(twelve.requests.begin(), twelve.requests.begin() + 5);
  requests.insert(requests.begin() + 2, KernelRequest{"broken", Spec().set("n", 4)});
  MpiCommunicator world(MPI_COMM_WORLD);
  std::string what;
  try {
    rt.kernels(requests, world);
    ADD_FAILURE() << "no CompileError on rank " << rank();
  } catch (const CompileError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("broken.kiln:4:"), std::string::npos) << what;
  expect_the_same_on_every_rank(what);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A real decomposition: every rank its own horizontal size (two sizes,
// alternating), its own number of requests (rank 3 one fewer), and the odd
// ranks one more kernel. Each distinct key is compiled once across ranks,
// every rank gets exactly what it asked for, and a second run reads the
// cache on rank 0 only.
struct RankShare {
  static int cells_of(int r) { return 20 + 4 * (r % 2); }
  static int count_of(int r) { return r == 3 ? 2 : 3; }
  static double rd_of(int i) { return 0.2 + 0.1 * i; }
  int cells = cells_of(rank());
  std::vector<ThetaCase> cases;
  std::vector<double> scaled = std::vector<double>(std::size_t(cells), 1.5);
  std::vector<KernelRequest> requests;
  RankShare() {
    for (int i = 0; i < count_of(rank()); ++i) {
      cases.emplace_back(cells, 4, false, 70 + i);
      requests.push_back({kName, cases.back().spec(0, cells, 0, 4, rd_of(i))});
    }
    if (rank() % 2 == 1) requests.push_back({"scale_by_two", Spec().set("n", cells)});
  }
  // Distinct (kernel, size, value) over every rank: what must be compiled.
  static std::size_t distinct_keys() {
    std::set<std::tuple<std::string, int, int>> keys;
    for (int r = 0; r < ranks(); ++r) {
      for (int i = 0; i < count_of(r); ++i) keys.insert({kName, cells_of(r), i});
      if (r % 2 == 1) keys.insert({"scale_by_two", cells_of(r), 0});
    }
    return keys.size();
  }
  void check(const std::vector<Kernel>& kernels) {
    ASSERT_EQ(kernels.size(), requests.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      ThetaCase got = cases[i], want = cases[i];
      got.run(kernels[i]);
      want.reference(0, cells, 0, 4, rd_of(int(i)));
      expect_close(got.exner, want.exner);
      expect_close(got.theta_v, want.theta_v);
    }
    if (rank() % 2 == 0) return;
    std::vector<double> x = scaled;
    kernels.back()(c_array(x.data(), {cells}));
    EXPECT_EQ(x, std::vector<double>(std::size_t(cells), 3.0));
  }
};

const char* kScale = "#pragma kiln kernel scale_by_two\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
                     "kiln::for_each_column(0, n, [&](kiln::index_t c) { x(c) *= 2.0; });\n";

std::uint64_t total_compiles(const Runtime& rt) { return sum(rt.metrics().total().compiles); }

TEST(Collective, RanksWithTheirOwnSizesAndCountsCompileEachDistinctKeyOnce) {
  SharedDir dir;
  {
    RankShare share;
    Runtime rt(config_for(dir.path()));
    rt.register_kernel(kScale, "scale_by_two.kiln");
    MpiCommunicator world(MPI_COMM_WORLD);
    share.check(rt.kernels(share.requests, world));
    EXPECT_EQ(total_compiles(rt), RankShare::distinct_keys());
  }
  RankShare share;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(kScale, "scale_by_two.kiln");
  MpiCommunicator world(MPI_COMM_WORLD);
  share.check(rt.kernels(share.requests, world));
  const KernelMetrics m = rt.metrics().total();
  EXPECT_EQ(sum(m.compiles), 0u);
  EXPECT_EQ(sum(disk_reads(m)), 1u) << "rank 0 reads the union's bundle, one file";
  EXPECT_EQ(disk_reads(m), rank() == 0 ? 1u : 0u);
}

// Requests that do not prepare on some ranks (a missing value on rank 1, an
// unknown kernel on rank 2): every rank throws the first of them, by rank,
// with its type; nobody is left waiting.
TEST(Collective, RequestsThatDoNotPrepareOnSomeRanksFailEveryRankAlike) {
  SharedDir dir;
  Twelve twelve;
  Runtime rt(config_for(dir.path()));
  std::vector<KernelRequest> requests(twelve.requests.begin(), twelve.requests.begin() + 3);
  if (rank() == 1) requests[1].spec = Spec().set("horizontal_start", 0);
  if (rank() == 2) requests.push_back({"no_such_kernel", Spec()});
  MpiCommunicator world(MPI_COMM_WORLD);
  std::string what;
  try {
    rt.kernels(requests, world);
    ADD_FAILURE() << "no SpecError on rank " << rank();
  } catch (const SpecError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("kiln: collective resolution: member 1: "), std::string::npos) << what;
  expect_the_same_on_every_rank(what);
  EXPECT_EQ(total_compiles(rt), 0u) << "nothing is compiled for a failed collective";
  MPI_Barrier(MPI_COMM_WORLD);
}

// Tiered start does not tier a collective (docs/manual/tiered-start.md): the
// group hands every member the specialised builds, each compiled once, and
// nothing is queued, so the wait returns at once and no generic build is made.
TEST(Collective, TieredStartLeavesTheCollectiveAsItIs) {
  SharedDir dir;
  Twelve twelve;
  Config config = config_for(dir.path());
  config.tiered = true;
  Runtime rt(config);
  const std::vector<KernelRequest> four(twelve.requests.begin(), twelve.requests.begin() + 4);
  MpiCommunicator world(MPI_COMM_WORLD);
  const std::vector<Kernel> kernels = rt.kernels(four, world);
  rt.wait_for_specialised();
  for (int i = 0; i < 4; ++i) {
    ThetaCase got = twelve.cases[i], want = twelve.cases[i];
    got.run(kernels[i]);
    want.reference(1, 29, 0, 5, 0.2 + 0.01 * i);
    expect_close(got.exner, want.exner);
  }
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(sum(m.kernels.count(std::string(kName) + " (generic)")), 0u);
  EXPECT_EQ(sum(m.kernels.at(kName).compiles), 4u);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace kiln::testing

// The other ranks print only their failures, with their rank.
class RankFailures : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed())
      std::fprintf(stderr, "rank %d: %s:%d: %s\n", kiln::testing::rank(), result.file_name(), result.line_number(),
                   result.summary());
  }
};

// `--die-on-rank N`: rank N dies (no MPI_Finalize) while the others are in a
// collective resolution waiting for it. mpirun must end the whole job, which
// the ctest entry mpi.rank_dies checks (it must fail, and within its timeout).
int die_on_rank(int dying) {
  kiln::testing::SharedDir dir;
  if (kiln::testing::rank() == dying) std::_Exit(3);
  kiln::Runtime rt(kiln::testing::config_for(dir.path()));
  kiln::MpiCommunicator world(MPI_COMM_WORLD);
  kiln::testing::Twelve twelve;
  rt.kernels(twelve.requests, world);
  MPI_Finalize();
  return 0;
}

// Every rank runs every test in the same order; rank 0 prints the results.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc == 3 && std::string(argv[1]) == "--die-on-rank") return die_on_rank(std::atoi(argv[2]));
  ::testing::InitGoogleTest(&argc, argv);
  if (kiln::testing::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailures);
  }
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (kiln::testing::rank() == 0 && any && !failed) std::fprintf(stderr, "collective tests failed on another rank\n");
  MPI_Finalize();
  return any;
}
