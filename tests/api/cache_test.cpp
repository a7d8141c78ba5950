// Three levels of lookup: memory, disk, compiler. Exact counts.
#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <type_traits>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

using Cache = RuntimeTest;

const char* kName = "update_theta_and_exner";

TEST_F(Cache, FirstResolutionCompilesLaterOnesHitMemory) {
  ThetaCase c(32, 8, false);
  const Spec spec = c.spec(0, 32, 0, 8);
  const Kernel first = rt.kernel(kName, spec);
  const Kernel again = rt.kernel(kName, spec);
  EXPECT_EQ(first.key(), again.key());
  const KernelMetrics m = rt.metrics().kernels.at(kName);
  EXPECT_EQ(m.compiles, 1u);
  EXPECT_EQ(m.disk_hits, 0u);
  EXPECT_EQ(m.memory_hits, 1u);
  EXPECT_EQ(entry_files(dir.path()).size(), 1u);
}

TEST_F(Cache, ASecondRuntimeLoadsFromDiskAndCompilesNothing) {
  ThetaCase a(32, 8, true), b(32, 8, true);
  a.run(rt.kernel(kName, a.spec(1, 30, 0, 8)));
  Runtime second(config_for(dir.path()));
  b.run(second.kernel(kName, b.spec(1, 30, 0, 8)));
  EXPECT_EQ(a.theta_v, b.theta_v);
  EXPECT_EQ(a.exner, b.exner);
  const KernelMetrics m = second.metrics().kernels.at(kName);
  EXPECT_EQ(m.compiles, 0u);
  EXPECT_EQ(m.disk_hits, 1u);
}

TEST_F(Cache, EverySpecialisationValueAndLayoutGivesItsOwnKey) {
  ThetaCase c(32, 8, false), f(32, 8, true);
  const std::string base = rt.kernel(kName, c.spec(0, 32, 0, 8)).key();
  EXPECT_NE(base, rt.kernel(kName, c.spec(1, 32, 0, 8)).key());
  EXPECT_NE(base, rt.kernel(kName, c.spec(0, 32, 0, 8, 0.3)).key());
  EXPECT_NE(base, rt.kernel(kName, f.spec(0, 32, 0, 8)).key());
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 4u);
}

TEST_F(Cache, GenericBuildIsSharedByEverySpecialisation) {
  ThetaCase c(32, 8, false), f(32, 8, true);
  const Kernel g1 = rt.kernel(kName, c.spec(0, 32, 0, 8), Mode::generic);
  const Kernel g2 = rt.kernel(kName, f.spec(2, 30, 1, 7, 0.3), Mode::generic);
  EXPECT_EQ(g1.key(), g2.key());
  EXPECT_FALSE(g1.specialised());
  const KernelMetrics m = rt.metrics().kernels.at(std::string(kName) + " (generic)");
  EXPECT_EQ(m.compiles, 1u);
  EXPECT_EQ(m.disk_hits, 0u);  // linked once, not loaded again from disk
  EXPECT_EQ(m.memory_hits, 1u);
  // ...and still honours each handle's own values.
  ThetaCase ref(32, 8, true), got(32, 8, true);
  ref.reference(2, 30, 1, 7, 0.3);
  got.run(g2);
  expect_close(got.theta_v, ref.theta_v);
  expect_close(got.exner, ref.exner);
}

// A damaged entry is a miss: recompiled, replaced, and the output is right.
void damage_and_check(const std::filesystem::path& dir, void (*damage)(const std::filesystem::path&)) {
  std::string key;
  {
    Runtime first(config_for(dir));
    ThetaCase c(32, 8, false);
    key = first.kernel(kName, c.spec(0, 32, 0, 8)).key();
  }
  const std::filesystem::path entry = dir / key.substr(0, 2) / key.substr(2);
  ASSERT_TRUE(std::filesystem::exists(entry));
  damage(entry);
  Runtime second(config_for(dir));
  ThetaCase got(32, 8, false), ref(32, 8, false);
  got.run(second.kernel(kName, got.spec(0, 32, 0, 8)));
  ref.reference(0, 32, 0, 8);
  expect_close(got.theta_v, ref.theta_v);
  expect_close(got.exner, ref.exner);
  const KernelMetrics m = second.metrics().kernels.at(kName);
  EXPECT_EQ(m.compiles, 1u);
  EXPECT_EQ(m.disk_hits, 0u);
  // The replacement is whole: a third runtime loads it from disk.
  Runtime third(config_for(dir));
  third.kernel(kName, got.spec(0, 32, 0, 8));
  EXPECT_EQ(third.metrics().kernels.at(kName).disk_hits, 1u);
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// The entry file: the payload (an object file) from offset 0, the metadata,
// then a 72-byte trailer (cache/entry_format.hpp).
constexpr std::size_t kTrailerSize = 72;

TEST_F(Cache, FlippedByteInThePayloadIsDetected) {
  damage_and_check(dir.path(), [](const std::filesystem::path& p) {
    std::string bytes = read_all(p);
    bytes[bytes.size() / 4] ^= 0x10;
    write_all(p, bytes);
  });
}

TEST_F(Cache, FlippedByteInTheTrailerIsDetected) {
  damage_and_check(dir.path(), [](const std::filesystem::path& p) {
    std::string bytes = read_all(p);
    bytes[bytes.size() - kTrailerSize + 20] ^= 0x01;  // inside the key
    write_all(p, bytes);
  });
}

TEST_F(Cache, TruncatedEntryIsDetected) {
  damage_and_check(dir.path(), [](const std::filesystem::path& p) {
    std::filesystem::resize_file(p, std::filesystem::file_size(p) - 100);
  });
}

TEST_F(Cache, WrongMagicIsDetected) {
  damage_and_check(dir.path(), [](const std::filesystem::path& p) {
    std::string bytes = read_all(p);
    bytes.replace(bytes.size() - kTrailerSize, 4, "ELF!");
    write_all(p, bytes);
  });
}

TEST_F(Cache, EmptyEntryIsDetected) {
  damage_and_check(dir.path(), [](const std::filesystem::path& p) { std::filesystem::resize_file(p, 0); });
}

// The address a handle calls (kiln/kernel.hpp: a Kernel is one pointer to its CallBlock).
const void* entry_of(const Kernel& kernel) {
  static_assert(sizeof(Kernel) == sizeof(const void*) && std::is_trivially_copyable_v<Kernel>);
  const detail::CallBlock* block = nullptr;
  std::memcpy(&block, &kernel, sizeof block);
  return reinterpret_cast<const void*>(block->entry);
}

// A process maps an entry once: a second Runtime calls the same mapping.
TEST_F(Cache, ASecondRuntimeReusesTheMappingOfTheSameEntry) {
  ThetaCase c(32, 8, false);
  std::optional<Runtime> first(std::in_place, config_for(dir.path()));
  const Kernel a = first->kernel(kName, c.spec(0, 32, 0, 8));
  const void* address = entry_of(a);
  first.reset();  // the mapping outlives its Runtime
  Runtime second(config_for(dir.path()));
  const Kernel b = second.kernel(kName, c.spec(0, 32, 0, 8));
  EXPECT_EQ(second.metrics().kernels.at(kName).disk_hits, 1u);
  EXPECT_EQ(entry_of(b), address);
  ThetaCase got(32, 8, false), ref(32, 8, false);
  got.run(b);
  ref.reference(0, 32, 0, 8);
  expect_close(got.exner, ref.exner);
}

bool known_to_the_dynamic_loader(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0;
}

bool mapped_from(const std::filesystem::path& file) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(file.string()) != std::string::npos) return true;
  return false;
}

// update_theta_and_exner calls nothing: its entry needs no dynamic linking,
// and is mapped from the cache file directly (jit/elf_image.hpp), in the
// Runtime that compiled it and in the next one.
TEST_F(Cache, AnEntryThatNeedsNoDynamicLinkingIsMappedWithoutTheDynamicLoader) {
  ThetaCase c(32, 8, false);
  const Kernel a = rt.kernel(kName, c.spec(0, 32, 0, 8));
  const std::string key = a.key();
  const std::filesystem::path entry = dir.path() / key.substr(0, 2) / key.substr(2);
  EXPECT_TRUE(mapped_from(entry));
  EXPECT_FALSE(known_to_the_dynamic_loader(entry_of(a)));
  Runtime second(config_for(dir.path()));
  const Kernel b = second.kernel(kName, c.spec(0, 32, 0, 8));
  EXPECT_EQ(second.metrics().kernels.at(kName).disk_hits, 1u);
  EXPECT_FALSE(known_to_the_dynamic_loader(entry_of(b)));
  ThetaCase got(32, 8, false), ref(32, 8, false);
  got.run(b);
  ref.reference(0, 32, 0, 8);
  expect_close(got.exner, ref.exner);
}

// Another process replaced the entry (a new file renamed over the path, as
// every writer does): the path's old mapping is not the verified file, so
// the kernel is loaded from its own copy.
TEST_F(Cache, AnEntryReplacedByAnotherFileIsNotTakenForTheOldMapping) {
  ThetaCase c(32, 8, false);
  Runtime first(config_for(dir.path()));
  const Kernel a = first.kernel(kName, c.spec(0, 32, 0, 8));
  const std::string key = a.key();
  const std::filesystem::path entry = dir.path() / key.substr(0, 2) / key.substr(2);
  const std::filesystem::path fresh = entry.string() + ".new";
  std::filesystem::copy_file(entry, fresh);
  std::filesystem::rename(fresh, entry);
  Runtime second(config_for(dir.path()));
  const Kernel b = second.kernel(kName, c.spec(0, 32, 0, 8));
  EXPECT_EQ(second.metrics().kernels.at(kName).disk_hits, 1u);
  EXPECT_NE(entry_of(b), entry_of(a));
  ThetaCase got(32, 8, false), ref(32, 8, false);
  got.run(b);
  ref.reference(0, 32, 0, 8);
  expect_close(got.exner, ref.exner);
}

// An entry damaged in place while a live Runtime has it mapped: the next
// Runtime rebuilds it, and must not be handed the old mapping (the dynamic
// loader knows files by path) but load its own copy.
TEST_F(Cache, EntryDamagedWhileMappedIsRebuiltIntoItsOwnMapping) {
  Runtime first(config_for(dir.path()));
  ThetaCase c(32, 8, false);
  const Kernel old_kernel = first.kernel(kName, c.spec(0, 32, 0, 8));
  const std::string key = old_kernel.key();
  const std::filesystem::path entry = dir.path() / key.substr(0, 2) / key.substr(2);
  {
    std::string bytes = read_all(entry);
    bytes[bytes.size() - kTrailerSize + 20] ^= 0x01;  // the trailer: no code of the mapped kernel changes
    // In place, as a stray writer would (kiln itself only ever renames whole files over entries).
    std::fstream out(entry, std::ios::binary | std::ios::in | std::ios::out);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Runtime second(config_for(dir.path()));
  const Kernel rebuilt = second.kernel(kName, c.spec(0, 32, 0, 8));
  EXPECT_EQ(second.metrics().kernels.at(kName).compiles, 1u);
  EXPECT_NE(entry_of(rebuilt), entry_of(old_kernel));
  for (const Kernel* k : {&rebuilt, &old_kernel}) {
    ThetaCase got(32, 8, false), ref(32, 8, false);
    got.run(*k);
    ref.reference(0, 32, 0, 8);
    expect_close(got.theta_v, ref.theta_v);
    expect_close(got.exner, ref.exner);
  }
}

TEST_F(Cache, UserKernelFromTextAndFile) {
  const std::string text = "#pragma kiln kernel twice\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
                           "#pragma kiln static double f\n"
                           "kiln::for_each_column(0, n, [&](kiln::index_t c) { x(c) *= f; });\n";
  EXPECT_EQ(rt.register_kernel(text, "twice.kiln"), "twice");
  std::ofstream(dir.path() / "thrice.kiln") << "#pragma kiln kernel thrice\n" << text.substr(text.find('\n') + 1);
  EXPECT_EQ(rt.register_kernel_file(dir.path() / "thrice.kiln"), "thrice");
  std::vector<double> x = {1, 2, 3, 4};
  rt.kernel("twice", Spec().set("n", 3).set("f", 2.0))(c_array(x.data(), {4}));
  rt.kernel("thrice", Spec().set("n", 2).set("f", 3.0))(c_array(x.data(), {4}));
  EXPECT_EQ(x, (std::vector<double>{6, 12, 6, 4}));
}

TEST(CacheDisabled, CompilesEveryRuntimeAndWritesNothing) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.use_disk_cache = false;
  ThetaCase c(16, 4, false);
  for (int i = 0; i < 2; ++i) {
    Runtime rt(config);
    rt.kernel(kName, c.spec(0, 16, 0, 4));
    EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 1u);
  }
  EXPECT_TRUE(entry_files(dir.path()).empty());
}

// The cache folder cannot be made (a file stands where a folder should: this
// holds even for root, unlike a chmod): kernels still work, from memory.
TEST(CacheUnwritable, FallsBackToInMemoryKernels) {
  TempDir dir;
  std::ofstream(dir.path() / "not-a-folder") << "x";
  Runtime rt(config_for(dir.path() / "not-a-folder" / "cache"));
  ThetaCase got(16, 4, false), ref(16, 4, false);
  got.run(rt.kernel(kName, got.spec(0, 16, 0, 4)));
  ref.reference(0, 16, 0, 4);
  expect_close(got.theta_v, ref.theta_v);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 1u);
  EXPECT_EQ(rt.kernel(kName, got.spec(0, 16, 0, 4)).key(), rt.kernel(kName, got.spec(0, 16, 0, 4)).key());
}

TEST(MetricsOutput, TableAndJsonCarryThePhasesAndCounters) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.time_calls = true;
  config.metrics_file = dir.path() / "metrics.json";
  {
    Runtime rt(config);
    ThetaCase c(16, 4, false);
    const Spec spec = c.spec(0, 16, 0, 4);
    for (int i = 0; i < 3; ++i) c.run(rt.kernel(kName, spec));
    const MetricsSnapshot m = rt.metrics();
    const PhaseStats& run = m.kernels.at(kName).phases.at("run");
    EXPECT_EQ(run.count, 2u);
    EXPECT_EQ(m.kernels.at(kName).phases.at("first_call").count, 1u);
    EXPECT_LE(run.min_ms, run.max_ms);
    const std::string table = m.table();
    for (const char* word : {"specialise", "key", "disk_lookup", "lock", "slot_wait", "compile", "store", "load",
                             "first_call", "run", "t_min", "t_avg", "t_max", "total", "compiles 1"})
      EXPECT_NE(table.find(word), std::string::npos) << word << "\n" << table;
    // One process, one thread: nobody held the build lock, so nothing waited
    // for it (making its folder and file is the phase `lock`).
    EXPECT_EQ(table.find("lock_wait"), std::string::npos) << table;
    // The timeline: asked for, then called, after the Runtime was made.
    const KernelMetrics& k = m.kernels.at(kName);
    ASSERT_TRUE(k.requested_ms.has_value() && k.first_call_ms.has_value());
    EXPECT_LE(m.process.runtime_created_ms, *k.requested_ms);
    EXPECT_LE(*k.requested_ms, *k.first_call_ms);
    EXPECT_LE(*k.first_call_ms, m.process.wall_ms);
    EXPECT_TRUE(m.process.start_known);
    EXPECT_GT(m.process.start_resolution_ms, 0.0);
  }
  const std::string json = read_all(dir.path() / "metrics.json");
  for (const char* word : {"\"schema_version\": 2", "\"process\"", "\"wall_ms\"", "\"first_request_ms\"",
                           "\"timeline\"", "\"requested_ms\"", "\"compiles\": 1", "\"disk_hits\": 0",
                           "\"memory_hits\": 2", "\"first_call\"", "\"lock\"", "\"total\""})
    EXPECT_NE(json.find(word), std::string::npos) << word << "\n" << json;
}

}  // namespace
}  // namespace kiln::testing
