// jit/host_target: the host's identity for cache keys, read without LLVM
// (x86: the vendor, the family/model/stepping and the CPUID leaves glibc
// cached at start-up, plus the C library's version).
#include <gtest/gtest.h>

#include <algorithm>
#include <gnu/libc-version.h>
#include <sched.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "jit/host_target.hpp"
#include "tests/jit/jit_test_support.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/platform/x86.h>
#endif

namespace kiln::jit {
namespace {

constexpr const char* kChildCheck = "host-target";

#if defined(__x86_64__)
// The APIC ID glibc saw in leaf 1 (EBX bits 31-24) when this process started.
unsigned startup_apic_id() { return __x86_get_cpuid_feature_leaf(CPUID_INDEX_1)->cpuid_array[1] >> 24; }
#else
unsigned startup_apic_id() { return 0; }
#endif

// In a fresh process (run_fresh_process): what host_target() says there.
[[maybe_unused]] const bool child_registered = test::register_child_check(kChildCheck, [] {
  const HostTarget& target = host_target();
  std::printf("triple=%s\ncpu=%s\nfeatures=%s\napic=%u\nran_on=%d\n", target.triple.c_str(), target.cpu.c_str(),
              target.features.c_str(), startup_apic_id(), ::sched_getcpu());
  return 0;
});

// key=value lines.
std::map<std::string, std::string> parse_lines(const std::string& text) {
  std::map<std::string, std::string> values;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const auto equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
    start = end + 1;
  }
  return values;
}

bool is_lower_hex(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(HostTarget, IsNonEmpty) {
  const HostTarget& host = host_target();
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_FALSE(host.features.empty());
  EXPECT_NE(host.triple.find("linux"), std::string::npos) << host.triple;
#if defined(__x86_64__)
  EXPECT_EQ(host.triple.rfind("x86_64", 0), 0u) << host.triple;
#endif
}

TEST(HostTarget, IsComputedOnceAndStable) {
  const HostTarget& first = host_target();
  const HostTarget& second = host_target();
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(first.cpu, second.cpu);
  EXPECT_EQ(first.features, second.features);
}

TEST(HostTarget, FeaturesAreHexThenTheCLibraryVersion) {
  const std::string& features = host_target().features;
  const std::string suffix = std::string(" glibc ") + gnu_get_libc_version();
  ASSERT_GT(features.size(), suffix.size()) << features;
  EXPECT_EQ(features.substr(features.size() - suffix.size()), suffix) << features;
  const std::string hex = features.substr(0, features.size() - suffix.size());
  EXPECT_TRUE(is_lower_hex(hex)) << features;
  EXPECT_EQ(hex.size() % 8, 0u) << "not whole 32-bit words: " << features;
#if defined(__x86_64__)
  // Nine leaves (glibc's list), each its four CPUID words and four usable words.
  EXPECT_EQ(hex.size(), 9u * 8u * 8u) << features;
#endif
}

#if defined(__x86_64__)
std::string vendor_from_cpuid() {
  unsigned max_leaf = 0, vendor[3] = {};
  __cpuid(0, max_leaf, vendor[0], vendor[2], vendor[1]);
  return std::string(reinterpret_cast<const char*>(vendor), sizeof vendor);
}

unsigned word(const std::string& features, std::size_t index) {
  return static_cast<unsigned>(std::stoul(features.substr(index * 8, 8), nullptr, 16));
}

TEST(HostTarget, X86CpuIsVendorFamilyModelStepping) {
  const std::string& cpu = host_target().cpu;
  const std::string vendor = vendor_from_cpuid();
  EXPECT_EQ(cpu.rfind(vendor + " family ", 0), 0u) << cpu;
  // What the kernel decoded for /proc/cpuinfo gives the same name.
  std::ifstream cpuinfo("/proc/cpuinfo");
  ASSERT_TRUE(cpuinfo) << "no /proc/cpuinfo";
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    fields[key] = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  const std::string expected = fields["vendor_id"] + " family " + fields["cpu family"] + " model " + fields["model"] +
                               " stepping " + fields["stepping"];
  EXPECT_EQ(cpu, expected);
}

TEST(HostTarget, X86LeafOneIsGlibcsWithTheApicIdMasked) {
  const std::string& features = host_target().features;
  ASSERT_GE(features.size(), 64u) << features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  ASSERT_TRUE(__get_cpuid(1, &eax, &ebx, &ecx, &edx));
  // Leaf 1 first: EAX (signature), EBX, ECX, EDX, then the usable bits of each.
  EXPECT_EQ(word(features, 0), eax) << features;
  EXPECT_EQ(word(features, 1) >> 24, 0u) << "the APIC ID is in the identity: " << features;
  EXPECT_EQ(word(features, 1), ebx & 0x00ffffffu) << features;
  EXPECT_EQ(word(features, 3), edx) << features;
  // Every x86-64 CPU has SSE2 (EDX bit 26), and glibc finds it usable.
  EXPECT_NE(word(features, 3) & (1u << 26), 0u) << features;
  EXPECT_NE(word(features, 7) & (1u << 26), 0u) << features;
}
#endif

TEST(HostTarget, SameInProcessesStartedOnDifferentCpus) {
  // glibc reads CPUID once, at start-up, on whatever CPU the process starts
  // on; leaf 1 then holds that CPU's APIC ID. Two processes pinned to two
  // CPUs must still get one identity (else every process would miss the cache
  // half the time).
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "this process may run on one CPU only: nothing to compare";

  std::vector<std::map<std::string, std::string>> seen;
  for (const int cpu : cpus) {
    const test::ChildResult child = test::run_fresh_process(kChildCheck, {}, cpu);
    ASSERT_EQ(child.exit_code, 0) << child.output;
    seen.push_back(parse_lines(child.output));
    EXPECT_EQ(seen.back()["ran_on"], std::to_string(cpu)) << child.output;
  }
  const HostTarget& here = host_target();
  for (const auto& child : seen) {
    EXPECT_EQ(child.at("triple"), here.triple);
    EXPECT_EQ(child.at("cpu"), here.cpu);
    EXPECT_EQ(child.at("features"), here.features);
  }
#if defined(__x86_64__)
  // The two processes did see two APIC IDs: the check above compared
  // something the masking had to remove.
  EXPECT_NE(seen[0].at("apic"), seen[1].at("apic"))
      << "CPUs " << cpus[0] << " and " << cpus[1] << " report the same APIC ID";
#endif
}

// The psABI's levels nest: what this CPU lacks of one it lacks of every
// level above. Every x86-64 CPU runs x86-64 itself.
TEST(CpuLevels, NestAndTheBaseLevelAlwaysRuns) {
#if defined(__x86_64__)
  for (const char* level : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"}) EXPECT_TRUE(is_cpu_level(level));
  EXPECT_TRUE(missing_features("x86-64").empty());
  const char* levels[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  for (int i = 0; i + 1 < 3; ++i) {
    const std::vector<std::string> lower = missing_features(levels[i]), higher = missing_features(levels[i + 1]);
    for (const std::string& f : lower)
      EXPECT_NE(std::find(higher.begin(), higher.end(), f), higher.end()) << f << " missing for " << levels[i];
  }
  EXPECT_EQ(missing_features("x86-64-v3").empty(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                                                        __builtin_cpu_supports("bmi2"));
#endif
  for (const char* other : {"native", "znver3", "x86-64-v5", ""}) EXPECT_FALSE(is_cpu_level(other)) << other;
#if defined(__x86_64__)
  // The CPUs LLVM knows, taken from it when kiln was built.
  EXPECT_GT(kCpuTableSize, 50u);
  for (const char* cpu : {"znver4", "sapphirerapids", "haswell", "x86-64-v3"}) EXPECT_TRUE(is_known_cpu(cpu)) << cpu;
  for (const char* other : {"native", "znver99", ""}) EXPECT_FALSE(is_known_cpu(other)) << other;
  // A named CPU asks at least what the level it belongs to asks.
  if (missing_features("x86-64-v3").empty()) EXPECT_TRUE(missing_features("nehalem").empty());
  if (!__builtin_cpu_supports("avx512f")) {
    const std::vector<std::string> lacks = missing_features("skylake-avx512");
    EXPECT_NE(std::find(lacks.begin(), lacks.end(), "avx512f"), lacks.end());
  }
#endif
}

}  // namespace
}  // namespace kiln::jit
