// Must fix 4 of issue 16: where no file may be executed (a noexec $TMPDIR with
// the disk cache off, a noexec cache folder, binaries received from another
// rank with a noexec $TMPDIR), a kernel could not be loaded at all and the
// process ended. Now a binary that cannot be mapped from its file is loaded
// from a copy in memory. Each case runs in a child that mounts a noexec tmpfs
// in a mount namespace of its own (root only; skipped elsewhere, saying why).
#include <sys/mount.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kiln/kiln.hpp"
#include "tests/trust/trust_test_support.hpp"

namespace kiln::testing::trust {
namespace {

// One kernel that calls libm (loaded with dlopen), one that calls nothing
// (mapped by kiln itself).
constexpr const char* kPowKernel = R"(#pragma kiln kernel noexec_pow
#pragma kiln array double y[1]
#pragma kiln scalar double e
#pragma kiln domain n
for (kiln::index_t i = 0; i < n; ++i) y(i) = kiln::pow(y(i), e);
)";
constexpr const char* kScaleKernel = R"(#pragma kiln kernel noexec_scale
#pragma kiln array double y[1]
#pragma kiln domain n
for (kiln::index_t i = 0; i < n; ++i) y(i) = 3.0 * y(i);
)";

Config config_for(const fs::path& scratch, const fs::path& cache) {
  Config config;
  config.use_disk_cache = !cache.empty();
  config.cache_dir = cache;
  config.index_path = "off";
  config.log_level = "warn";
  config.build_slot_dir = scratch / "slots";
  return config;
}

void register_both(Runtime& rt) {
  rt.register_kernel(kPowKernel, "noexec_pow.kiln");
  rt.register_kernel(kScaleKernel, "noexec_scale.kiln");
}

std::vector<KernelRequest> both_requests() {
  return {{"noexec_pow", Spec().set("n", 2), Mode::specialised}, {"noexec_scale", Spec().set("n", 2), Mode::specialised}};
}

// Calls both kernels; 0 when both results are right.
int call_both(Kernel pow, Kernel scale) {
  std::vector<double> y = {2.0, 3.0}, z = {2.0, 3.0};
  pow(c_array(y.data(), {2}), 1.5);
  scale(c_array(z.data(), {2}));
  const bool right = y[0] == std::pow(2.0, 1.5) && y[1] == std::pow(3.0, 1.5) && z[0] == 6.0 && z[1] == 9.0;
  std::printf("results %s\n", right ? "right" : "wrong");
  return right ? 0 : 4;
}

// Runs `body` in a child where `scratch`/noexec is a noexec tmpfs and $TMPDIR.
Forked with_noexec_tmpdir(const ScratchFolder& scratch, const std::function<int(const fs::path&)>& body) {
  const fs::path noexec = scratch.path() / "noexec";
  fs::create_directories(noexec);
  fs::create_directories(scratch.path() / "slots");
  return run_forked([&] {
    if (!private_tmpfs(noexec, MS_NOEXEC | MS_NOSUID | MS_NODEV)) return kSkip;
    ::setenv("TMPDIR", noexec.c_str(), 1);
    return body(noexec);
  });
}

#define SKIP_UNLESS_ROOT()                                                                                    \
  if (::geteuid() != 0)                                                                                       \
  GTEST_SKIP() << "mounting a noexec tmpfs in a mount namespace of its own needs root; this test runs as uid " \
               << ::geteuid()

TEST(NoexecLoads, TemporaryFolderNoexecWithTheDiskCacheOff) {
  SKIP_UNLESS_ROOT();
  ScratchFolder scratch;
  const Forked r = with_noexec_tmpdir(scratch, [&](const fs::path&) {
    Runtime rt(config_for(scratch.path(), {}));
    register_both(rt);
    return call_both(rt.kernel("noexec_pow", Spec().set("n", 2)), rt.kernel("noexec_scale", Spec().set("n", 2)));
  });
  if (r.status == kSkip) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "results right")) << r.output;
}

TEST(NoexecLoads, CacheFolderNoexec) {
  SKIP_UNLESS_ROOT();
  ScratchFolder scratch;
  const Forked r = with_noexec_tmpdir(scratch, [&](const fs::path& noexec) {
    const Config config = config_for(scratch.path(), noexec / "cache");
    {
      Runtime cold(config);  // compiles and stores both
      register_both(cold);
      if (const int wrong = call_both(cold.kernel("noexec_pow", Spec().set("n", 2)),
                                      cold.kernel("noexec_scale", Spec().set("n", 2))))
        return wrong;
    }
    Runtime warm(config);  // loads both from the noexec cache
    register_both(warm);
    const int wrong =
        call_both(warm.kernel("noexec_pow", Spec().set("n", 2)), warm.kernel("noexec_scale", Spec().set("n", 2)));
    std::printf("disk_hits %llu\n", static_cast<unsigned long long>(warm.metrics().total().disk_hits));
    return wrong;
  });
  if (r.status == kSkip) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "disk_hits 2")) << "the second Runtime did not use the cache:\n" << r.output;
}

// The entry files under `cache` (locks, journals and index aside): their inode
// (a writer renames a new file over an entry) and bytes.
std::map<fs::path, std::string> entries_under(const fs::path& cache) {
  std::map<fs::path, std::string> out;
  for (const auto& item : fs::recursive_directory_iterator(cache)) {
    const fs::path& path = item.path();
    if (!item.is_regular_file() || path.parent_path() == cache || path.extension() == ".lock") continue;
    struct stat info {};
    ::stat(path.c_str(), &info);
    std::ifstream in(path, std::ios::binary);
    out[path] = std::to_string(info.st_ino) + ':' +
                std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

// A batch's bundle in a noexec cache folder cannot be mapped: it is read and
// checked instead (runtime/resolve/bundles.cpp), kept, and its kernels load
// one by one from copies in memory, right, and nothing is written again.
TEST(NoexecLoads, ABundleInANoexecCacheFolderIsKeptAndItsKernelsLoadOneByOne) {
  SKIP_UNLESS_ROOT();
  ScratchFolder scratch;
  const Forked r = with_noexec_tmpdir(scratch, [&](const fs::path& noexec) {
    const Config config = config_for(scratch.path(), noexec / "cache");
    const std::vector<KernelRequest> batch = {{"noexec_scale", Spec().set("n", 2), Mode::specialised},
                                              {"noexec_scale", Spec().set("n", 3), Mode::specialised}};
    const auto run = [&](Runtime& rt) {
      rt.register_kernel(kScaleKernel, "noexec_scale.kiln");
      const std::vector<Kernel> kernels = rt.kernels(batch);
      std::vector<double> y = {1.0, 2.0, 4.0}, z = {1.0, 2.0, 4.0};
      kernels[0](c_array(y.data(), {3}));
      kernels[1](c_array(z.data(), {3}));
      return y == std::vector<double>{3.0, 6.0, 4.0} && z == std::vector<double>{3.0, 6.0, 12.0} ? 0 : 4;
    };
    {
      Runtime cold(config);  // compiles both, stores them and their bundle
      if (const int wrong = run(cold)) return wrong;
    }
    const std::map<fs::path, std::string> stored = entries_under(noexec / "cache");
    Runtime warm(config);
    if (const int wrong = run(warm)) return wrong;
    std::printf("entries %zu\ndisk_hits %llu\ncompiles %llu\nrewritten %d\n", stored.size(),
                static_cast<unsigned long long>(warm.metrics().total().disk_hits),
                static_cast<unsigned long long>(warm.metrics().total().compiles),
                entries_under(noexec / "cache") != stored ? 1 : 0);
    return 0;
  });
  if (r.status == kSkip) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "entries 3")) << "two kernels and their bundle:\n" << r.output;
  EXPECT_TRUE(contains(r.output, "disk_hits 2")) << r.output;
  EXPECT_TRUE(contains(r.output, "compiles 0")) << r.output;
  EXPECT_TRUE(contains(r.output, "rewritten 0")) << r.output;
}

// A group of one: what rank 0 sends is what it has.
class Alone : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void broadcast(std::vector<char>&, int) override {}
};

TEST(NoexecLoads, BinariesFromTheGroupWithATemporaryFolderNoexec) {
  SKIP_UNLESS_ROOT();
  ScratchFolder scratch;
  const Forked r = with_noexec_tmpdir(scratch, [&](const fs::path&) {
    Runtime rt(config_for(scratch.path(), {}));
    register_both(rt);
    Alone group;
    const std::vector<Kernel> kernels = rt.kernels(both_requests(), group);  // linked from memory
    return call_both(kernels[0], kernels[1]);
  });
  if (r.status == kSkip) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "results right")) << r.output;
}

}  // namespace
}  // namespace kiln::testing::trust
