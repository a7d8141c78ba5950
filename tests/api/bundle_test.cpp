// Cache bundles (docs/manual/cache.md, Bundles): a batch of 20 kernels that
// processes built one by one is written as one bundle; a new process's batch
// of the same kernels maps that one file and runs the same code; a bundle
// that is corrupt, truncated or foreign is refused, naming it, and the batch
// falls back to the kernels' own entries, never running a wrong binary.
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "cache/bundle_format.hpp"
#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "cache/entry_metadata.hpp"
#include "tests/api/child_process.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;
constexpr int kKernels = 20;

// What child_main.cpp's `many 20 batch` reported.
struct BatchRun {
  bool ok = false;
  double compiles = -1, disk_hits = -1, wrong = -1;
  std::string log;
};

// A new process's batch of the 20 kernels on `cache`, logging at `level`.
BatchRun run_batch(const fs::path& cache, const fs::path& scratch, const std::string& level = "error") {
  ChildProcess child({KILN_TEST_CHILD, "many", std::to_string(kKernels), "batch"},
                     {{"KILN_CACHE_DIR", cache.string()}, {"KILN_LOG_LEVEL", level}}, scratch / "batch.err");
  child.read_all(std::chrono::seconds(300));
  child.wait(std::chrono::seconds(300));
  return {child.exited_ok(), child.number("compiles"), child.number("disk_hits"), child.number("wrong"),
          child.stderr_text()};
}

cache::Key key_of(const fs::path& entry) {
  cache::Key key;
  EXPECT_TRUE(cache::Key::from_hex(entry.parent_path().filename().string() + entry.filename().string(), key));
  return key;
}

// The entry files that hold a bundle (their metadata says so).
std::vector<fs::path> bundle_files(const fs::path& cache) {
  const cache::DiskStore store(cache);
  std::vector<fs::path> out;
  for (const fs::path& file : entry_files(cache)) {
    const auto metadata = store.read_metadata(key_of(file));
    if (!metadata || !*metadata) continue;
    const auto record = cache::decode_metadata((*metadata)->metadata);
    if (record && record->backend == "bundle") out.push_back(file);
  }
  return out;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_bytes(const fs::path& file, const std::string& bytes) {
  fs::remove(file);  // a new file, as a writer's rename makes: the old one may be mapped
  std::ofstream(file, std::ios::binary) << bytes;
}

// The requests child_main.cpp's `many` makes, with their cases.
struct Twenty {
  std::vector<ThetaCase> cases;
  std::vector<KernelRequest> requests;
  Twenty() {
    for (int i = 0; i < kKernels; ++i) {
      cases.emplace_back(40, 6, i % 2 == 1, 100 + i);
      requests.push_back({"update_theta_and_exner", cases.back().spec(2, 38, 1, 6, 0.2 + 0.01 * i)});
    }
  }
};

// The distinct files of `cache` this process has mapped.
std::set<fs::path> mapped_files_of(const fs::path& cache) {
  std::ifstream maps("/proc/self/maps");
  std::set<fs::path> out;
  for (std::string line; std::getline(maps, line);)
    if (const auto at = line.find(cache.string()); at != std::string::npos) out.insert(line.substr(at));
  return out;
}

// A cache filled by one process's batch (compiled one by one, then bundled).
class Bundles : public ::testing::Test {
 protected:
  void SetUp() override {
    const BatchRun cold = run_batch(cache, scratch.path());
    ASSERT_TRUE(cold.ok) << cold.log;
    ASSERT_EQ(cold.compiles, kKernels);
    ASSERT_EQ(bundle_files(cache).size(), 1u);
    bundle = bundle_files(cache).front();
  }
  TempDir scratch;
  fs::path cache = scratch.path() / "cache";
  fs::path bundle;
};

TEST_F(Bundles, AWarmBatchMapsOneFileAndRunsWhatPerKernelLoadsRun) {
  const std::string payload_before = read_bytes(bundle);
  Twenty batch, single;
  {
    Runtime rt(config_for(cache));
    const std::vector<Kernel> kernels = rt.kernels(batch.requests);
    EXPECT_EQ(rt.metrics().total().compiles, 0u);
    EXPECT_EQ(rt.metrics().total().disk_hits, static_cast<std::uint64_t>(kKernels));
    EXPECT_EQ(rt.metrics().total().phases.at("disk_lookup").count, 1u);  // one cache file opened for the 20
    EXPECT_EQ(mapped_files_of(cache), std::set<fs::path>{bundle});  // and mapped: not one of the 20 entries
    for (int i = 0; i < kKernels; ++i) batch.cases[i].run(kernels[i]);
  }
  Runtime rt(config_for(cache));
  for (int i = 0; i < kKernels; ++i)
    single.cases[i].run(rt.kernel(single.requests[i].name, single.requests[i].spec));  // from each own entry
  EXPECT_EQ(mapped_files_of(cache).size(), static_cast<std::size_t>(kKernels + 1));
  EXPECT_EQ(rt.metrics().total().phases.at("disk_lookup").count, static_cast<std::uint64_t>(kKernels));
  for (int i = 0; i < kKernels; ++i) {
    EXPECT_EQ(batch.cases[i].exner, single.cases[i].exner) << i;
    EXPECT_EQ(batch.cases[i].theta_v, single.cases[i].theta_v) << i;
  }
  EXPECT_EQ(read_bytes(bundle), payload_before);  // a warm batch rewrites nothing
}

TEST_F(Bundles, ServeTheirKernelsWhenTheirOwnEntriesAreGone) {
  for (const fs::path& file : entry_files(cache))
    if (file != bundle) fs::remove(file);
  const BatchRun warm = run_batch(cache, scratch.path());
  ASSERT_TRUE(warm.ok) << warm.log;
  EXPECT_EQ(warm.compiles, 0);
  EXPECT_EQ(warm.disk_hits, kKernels);
  EXPECT_EQ(warm.wrong, 0);
}

// Each way a bundle can be bad, one after another on the same cache: the
// batch refuses it naming the file, loads the 20 entries one by one (no
// compile), computes right, and writes a good bundle in its place.
TEST_F(Bundles, BadBundlesAreRefusedNamingThemAndReplaced) {
  const std::string good = read_bytes(bundle);
  const cache::Key key = key_of(bundle);
  const cache::DecodedEntry entry = cache::decode_entry(good, key);
  ASSERT_EQ(entry.error, cache::EntryError::none);
  const std::string payload(entry.payload.data(), entry.payload.size());
  const cache::DecodedBundle decoded = cache::decode_bundle(entry.payload);
  ASSERT_EQ(decoded.members.size(), static_cast<std::size_t>(kKernels));
  const auto image = [&](std::size_t i) {
    return std::span<const char>(payload).subspan(decoded.members[i].offset, decoded.members[i].size);
  };
  // A well-formed entry, as a foreign writer would seal it, around another payload.
  const auto sealed = [&](std::span<const char> bytes) { return cache::encode_entry(key, bytes, entry.metadata); };
  const std::string not_a_bundle = "an entry that holds no bundle";
  // One of the set's kernels and one of no request's.
  const std::string other_set =
      *cache::encode_bundle({{decoded.members[0].key, image(0)}, {cache::Key{1, 2}, image(1)}});
  // The right keys, each with its neighbour's image: no member defines its own entry symbol.
  std::vector<cache::BundleInput> swapped;
  for (std::size_t i = 0; i < decoded.members.size(); ++i)
    swapped.push_back({decoded.members[i].key, image((i + 1) % decoded.members.size())});
  std::string flipped = good;
  flipped[decoded.members[3].offset + 100] ^= 0x10;  // inside an image: the entry checksum catches it

  struct Case {
    std::string name, bytes, says;
  };
  const std::vector<Case> cases = {
      {"flipped byte", flipped, "payload checksum mismatch"},
      {"truncated", good.substr(0, good.size() / 2), "bad entry"},
      {"not a bundle", sealed(not_a_bundle), "not a kiln cache bundle"},
      {"another set", sealed(other_set), "it holds kernels of another set"},
      {"swapped images", sealed(*cache::encode_bundle(swapped)), "does not run from it"},
  };
  for (const Case& c : cases) {
    write_bytes(bundle, c.bytes);
    const BatchRun run = run_batch(cache, scratch.path(), "warn");
    ASSERT_TRUE(run.ok) << c.name << ": " << run.log;
    EXPECT_EQ(run.compiles, 0) << c.name;
    EXPECT_EQ(run.disk_hits, kKernels) << c.name;
    EXPECT_EQ(run.wrong, 0) << c.name;
    EXPECT_NE(run.log.find(bundle.string()), std::string::npos) << c.name << ": " << run.log;
    EXPECT_NE(run.log.find(c.says), std::string::npos) << c.name << ": " << run.log;
    EXPECT_EQ(read_bytes(bundle), good) << c.name << ": the batch wrote the bundle again";
  }
}

// A kernel that calls libm needs the dynamic loader: it stays out of the
// bundle, loads from its own entry, and the bundle, holding the others, is
// written once, not again by every batch of the set.
TEST(BundleMembers, KernelsThatNeedTheLoaderStayOutAndTheBundleIsNotRewritten) {
  TempDir dir;
  const char* kExp =
      "#pragma kiln kernel expo\n#pragma kiln array double x[n]\n#pragma kiln array double out[n]\n"
      "#pragma kiln domain start end\n#pragma kiln size n contains start end\n"
      "kiln::for_each_column(start, end, [&](kiln::index_t i) { out(i) = kiln::exp(x(i)); });\n";
  ThetaCase theta(40, 6, false, 7);
  std::vector<KernelRequest> requests = {{"expo", Spec().set("start", 0).set("end", 8)},
                                         {"expo", Spec().set("start", 0).set("end", 16)},
                                         {"update_theta_and_exner", theta.spec(2, 38, 1, 6)}};
  const auto batch = [&] {
    Runtime rt(config_for(dir.path()));
    rt.register_kernel(kExp, "expo.kiln");
    std::vector<double> x(16), out(16, -1.0);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * double(i) - 0.7;
    const std::vector<Kernel> kernels = rt.kernels(requests);
    kernels[1](c_array(x.data(), {16}), c_array(out.data(), {16}));
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[i], std::exp(x[i])) << i;
    return rt.metrics().total();
  };
  EXPECT_EQ(batch().compiles, 3u);
  const std::vector<fs::path> bundles = bundle_files(dir.path());
  ASSERT_EQ(bundles.size(), 1u);
  const std::string bytes = read_bytes(bundles.front());
  const cache::DecodedEntry entry = cache::decode_entry(bytes, key_of(bundles.front()));
  ASSERT_EQ(entry.error, cache::EntryError::none);
  EXPECT_EQ(cache::decode_bundle(entry.payload).members.size(), 1u);  // update_theta_and_exner alone
  struct stat before {};
  ASSERT_EQ(::stat(bundles.front().c_str(), &before), 0);
  const KernelMetrics warm = batch();
  EXPECT_EQ(warm.compiles, 0u);
  EXPECT_EQ(warm.disk_hits, 3u);
  struct stat after {};
  ASSERT_EQ(::stat(bundles.front().c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the bundle was written again";
}

// Processes that each build or load the 20 kernels one by one write the same
// bundle at once: every process computes right, one good bundle stays, and
// a new process's batch maps it alone.
TEST(BundleWriters, ConcurrentProcessesLeaveOneGoodBundle) {
  TempDir scratch;
  const fs::path cache = scratch.path() / "cache";
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int p = 0; p < 6; ++p) {
    children.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{KILN_TEST_CHILD, "many", std::to_string(kKernels), "batch"},
        std::map<std::string, std::string>{{"KILN_CACHE_DIR", cache.string()}, {"KILN_LOG_LEVEL", "error"}},
        scratch.path() / ("child" + std::to_string(p) + ".err")));
  }
  for (auto& child : children) {
    child->read_all(std::chrono::seconds(300));
    child->wait(std::chrono::seconds(300));
    EXPECT_TRUE(child->exited_ok()) << child->stderr_text();
    EXPECT_EQ(child->number("wrong"), 0);
  }
  const std::vector<fs::path> bundles = bundle_files(cache);
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_EQ(entry_files(cache).size(), static_cast<std::size_t>(kKernels + 1));
  const std::string bytes = read_bytes(bundles.front());
  const cache::DecodedEntry entry = cache::decode_entry(bytes, key_of(bundles.front()));
  ASSERT_EQ(entry.error, cache::EntryError::none);
  EXPECT_EQ(cache::decode_bundle(entry.payload).members.size(), static_cast<std::size_t>(kKernels));
  Twenty twenty;
  Runtime rt(config_for(cache));
  rt.kernels(twenty.requests);
  EXPECT_EQ(rt.metrics().total().disk_hits, static_cast<std::uint64_t>(kKernels));
  EXPECT_EQ(mapped_files_of(cache), std::set<fs::path>{bundles.front()});
}

}  // namespace
}  // namespace kiln::testing
