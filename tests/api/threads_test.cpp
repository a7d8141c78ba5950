// Threads and batches: every key is compiled once, whoever asks for it and
// however many ask at once. Counts are exact.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "cache/build_lock.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

constexpr int kThreads = 16;
constexpr int kKernels = 20;
const char* kName = "update_theta_and_exner";

double rd_o_cvd_of(int i) { return 0.2 + 0.01 * i; }

// kKernels specialisations of one kernel, with their inputs and references.
struct Twenty {
  std::vector<ThetaCase> cases, wants;
  std::vector<KernelRequest> requests;
  explicit Twenty(unsigned seed = 7) {
    for (int i = 0; i < kKernels; ++i) {
      cases.emplace_back(40, 6, i % 2 == 0, seed + i);
      requests.push_back({kName, cases.back().spec(1, 39, 0, 6, rd_o_cvd_of(i))});
      wants.push_back(cases.back());
      wants.back().reference(1, 39, 0, 6, rd_o_cvd_of(i));
    }
  }
  // kernels[i] is request i's handle; the first kernels.size() are checked.
  void check(const std::vector<Kernel>& kernels) {
    ASSERT_LE(kernels.size(), cases.size());
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      ThetaCase got = cases[i];
      got.run(kernels[i]);
      expect_close(got.exner, wants[i].exner);
      expect_close(got.theta_v, wants[i].theta_v);
    }
  }
};

// Each thread asks for every kernel, starting at its own: collisions on
// every key, not a convoy behind the first.
std::vector<Kernel> resolve_rotated(Runtime& rt, const Twenty& twenty, int start) {
  std::vector<Kernel> kernels(kKernels);
  for (int n = 0; n < kKernels; ++n) {
    const int i = (start + n) % kKernels;
    kernels[i] = rt.kernel(twenty.requests[i].name, twenty.requests[i].spec);
  }
  return kernels;
}

TEST(Threads, SixteenRuntimesOnOneEmptyCacheCompileEachKernelOnce) {
  TempDir dir;
  Twenty twenty;
  std::vector<std::unique_ptr<Runtime>> runtimes;
  for (int t = 0; t < kThreads; ++t) runtimes.push_back(std::make_unique<Runtime>(config_for(dir.path())));
  std::vector<std::vector<Kernel>> got(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        got[t] = t % 2 ? resolve_rotated(*runtimes[t], twenty, t) : runtimes[t]->kernels(twenty.requests);
      });
  }
  std::uint64_t compiles = 0, disk_hits = 0;
  for (int t = 0; t < kThreads; ++t) {
    twenty.check(got[t]);
    compiles += runtimes[t]->metrics().total().compiles;
    disk_hits += runtimes[t]->metrics().total().disk_hits;
  }
  EXPECT_EQ(compiles, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(compiles + disk_hits, static_cast<std::uint64_t>(kKernels * kThreads));
}

TEST(Threads, ThreadsOfOneRuntimeWaitForOneCompilePerKey) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  Twenty twenty;
  std::vector<std::vector<Kernel>> got(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { got[t] = t % 2 ? resolve_rotated(rt, twenty, t) : rt.kernels(twenty.requests); });
  }
  for (int t = 0; t < kThreads; ++t) twenty.check(got[t]);
  const KernelMetrics m = rt.metrics().kernels.at(kName);
  EXPECT_EQ(m.compiles, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(m.disk_hits, 0u);  // never loaded back what this process built
  // The 20 entries and the bundle a batch that built them wrote (docs/manual/cache.md, Bundles).
  EXPECT_EQ(entry_files(dir.path()).size(), static_cast<std::size_t>(kKernels) + 1);
}

TEST(Batch, ResolvesInRequestOrderAndSharesRepeatedKeys) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  Twenty twenty;
  std::vector<KernelRequest> requests = twenty.requests;
  requests.push_back(twenty.requests[3]);  // the same request twice
  const std::vector<Kernel> kernels = rt.kernels(requests);
  EXPECT_EQ(kernels[3].key(), kernels[kKernels].key());
  twenty.check({kernels.begin(), kernels.begin() + kKernels});
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, static_cast<std::uint64_t>(kKernels));
  // A second batch is served from memory.
  rt.kernels(requests);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, static_cast<std::uint64_t>(kKernels));
}

TEST(Batch, OneBadRequestFailsAfterTheOthersAreResolved) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  Twenty twenty;
  std::vector<KernelRequest> requests(twenty.requests.begin(), twenty.requests.begin() + 3);
  requests.insert(requests.begin() + 1, KernelRequest{"no_such_kernel", Spec()});
  EXPECT_THROW(rt.kernels(requests), UnknownKernelError);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 3u);
  // The good ones were kept: asking again compiles nothing.
  rt.kernel(requests[0].name, requests[0].spec);
  rt.kernel(requests[3].name, requests[3].spec);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 3u);
}

// Another process holds one key's build lock: the batch builds the other
// keys meanwhile instead of queueing behind it, then builds that one once
// the lock is free.
TEST(Batch, BuildsOtherKeysWhileAnotherProcessHoldsOne) {
  TempDir dir;
  Twenty twenty;
  std::string held_key;
  {
    Config scratch = config_for(dir.path());
    scratch.use_disk_cache = false;
    held_key = Runtime(scratch).kernel(kName, twenty.requests[0].spec).key();
  }
  const std::filesystem::path lock_file = dir.path() / held_key.substr(0, 2) / (held_key.substr(2) + ".lock");
  std::optional<cache::BuildLock> lock(cache::BuildLock::acquire(lock_file, std::chrono::milliseconds(0)));
  ASSERT_TRUE(lock->held()) << lock->problem();

  Config config = config_for(dir.path());
  config.build_threads = 2;
  Runtime rt(config);
  std::vector<KernelRequest> requests(twenty.requests.begin(), twenty.requests.begin() + 4);
  std::vector<Kernel> kernels;
  std::jthread batch([&] { kernels = rt.kernels(requests); });
  // The three free keys appear on disk while the fourth stays locked.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (entry_files(dir.path()).size() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(entry_files(dir.path()).size(), 3u);
  lock.reset();
  batch.join();
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 4u);
  EXPECT_EQ(entry_files(dir.path()).size(), 5u);  // and the batch's bundle
  twenty.check({kernels.begin(), kernels.end()});
}

// KILN_BUILD_SLOTS=1 and another process holds the one slot: nothing is
// compiled until it is free, whether one kernel or a batch is asked for.
TEST(BuildSlots, NoCompileWhileAnotherProcessHoldsTheOnlySlot) {
  TempDir dir, slot_dir;
  Twenty twenty;
  std::optional<cache::BuildLock> held(
      cache::BuildLock::acquire(slot_dir.path() / "slot-0", std::chrono::milliseconds(0)));
  ASSERT_TRUE(held->held()) << held->problem();

  Config config = config_for(dir.path());
  config.build_slots = 1;
  config.build_slot_dir = slot_dir.path();
  Runtime rt(config);
  std::vector<Kernel> batch;
  Kernel single;
  std::jthread one([&] { single = rt.kernel(kName, twenty.requests[0].spec); });
  std::jthread many([&] { batch = rt.kernels({twenty.requests.begin() + 1, twenty.requests.begin() + 4}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(entry_files(dir.path()).empty());
  EXPECT_EQ(rt.metrics().total().compiles, 0u);
  held.reset();
  one.join();
  many.join();
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 4u);
  std::vector<Kernel> all = {single};
  all.insert(all.end(), batch.begin(), batch.end());
  twenty.check(all);
}

// The default build threads are the CPUs the process may run on (an MPI rank
// bound to one core compiles in one thread), at most 8.
TEST(BuildThreads, DefaultFollowsTheCpusThisProcessMayUse) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  TempDir dir;
  EXPECT_EQ(Runtime(config_for(dir.path())).config().build_threads, std::min(unsigned(CPU_COUNT(&all)), 8u));
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const unsigned bound = Runtime(config_for(dir.path())).config().build_threads;
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(bound, 1u);
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// Kernel::run_on: one call on n threads (the prelude's phases), the same bits
// as on one; Config::threads gives a handle its count; timed calls say how
// many threads they ran on.
TEST(KernelThreads, RunOnAndConfigThreadsGiveOneThreadsResults) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.time_calls = true;
  Runtime rt(config);
  ThetaCase one(37, 5, true), three(37, 5, true), configured(37, 5, true);
  const Kernel k = rt.kernel("update_theta_and_exner", one.spec(2, 35, 1, 5));
  one.run(k);
  k.run_on(3, three.view(three.theta_v), three.view(three.exner), three.area_view(), three.view(three.z_temp));
  EXPECT_EQ(three.theta_v, one.theta_v);
  EXPECT_EQ(three.exner, one.exner);
  EXPECT_EQ(rt.metrics().kernels.at("update_theta_and_exner").threads, 3);

  config.threads = 7;  // more than CI's cores
  Runtime seven(config);
  configured.run(seven.kernel("update_theta_and_exner", configured.spec(2, 35, 1, 5)));
  EXPECT_EQ(configured.theta_v, one.theta_v);
  // 132 points: the configured threads are given by work, one per 16,384
  // points (docs/manual/threads.md; tests/api/thread_rules_test.cpp), so one.
  EXPECT_EQ(seven.metrics().total().threads, 1);
  EXPECT_EQ(seven.metrics().total().compiles, 0u);  // the thread count is no part of the key
}

}  // namespace
}  // namespace kiln::testing
