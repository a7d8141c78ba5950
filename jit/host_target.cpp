#include "jit/host_target.hpp"

#include <fstream>
#include <string>

#include <gnu/libc-version.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
#include <sys/platform/x86.h>
#define KILN_GLIBC_CPUID 1
#endif
#else
#include <sys/auxv.h>
#endif

namespace kiln::jit {
namespace {

// Eight hex digits (printf's %08x, without printf's cost: 72 of these per process).
void append_hex(std::string& out, unsigned value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(value >> shift) & 0xfu];
}

#if defined(__x86_64__) || defined(__i386__)

struct Leaf {
  unsigned cpuid[4] = {};   // eax, ebx, ecx, edx
  unsigned active[4] = {};  // the bits glibc found usable (OS support checked, e.g. XCR0 for AVX-512)
};

// The CPUID leaves glibc read at start-up (its list, in its order: 1, 7,
// 0x80000001, 0xd.1, 0x80000007, 0x80000008, 7.1, 0x19, 0x14). A glibc older
// than 2.33 does not share them: then read them here.
constexpr unsigned kLeafCount = 9;

Leaf read_leaf(unsigned index) {
  Leaf leaf;
#ifdef KILN_GLIBC_CPUID
  const cpuid_feature* f = __x86_get_cpuid_feature_leaf(index);
  static_assert(sizeof f->cpuid_array == sizeof leaf.cpuid && sizeof f->active_array == sizeof leaf.active);
  for (int r = 0; r < 4; ++r) {
    leaf.cpuid[r] = f->cpuid_array[r];
    leaf.active[r] = f->active_array[r];
  }
#else
  static constexpr unsigned kLeaves[kLeafCount][2] = {{1, 0},          {7, 0},          {0x80000001, 0},
                                                       {0xd, 1},        {0x80000007, 0}, {0x80000008, 0},
                                                       {7, 1},          {0x19, 0},       {0x14, 0}};
  unsigned* r = leaf.cpuid;
  if (__get_cpuid_count(kLeaves[index][0], kLeaves[index][1], &r[0], &r[1], &r[2], &r[3]) == 0) return Leaf{};
#endif
  return leaf;
}

HostTarget detect() {
  HostTarget target;
  target.triple = KILN_HOST_TRIPLE;
  // The vendor is not among glibc's leaves: one CPUID.
  unsigned max_leaf = 0, vendor[3] = {};
  __cpuid(0, max_leaf, vendor[0], vendor[2], vendor[1]);
  const std::string vendor_name(reinterpret_cast<const char*>(vendor), sizeof vendor);

  Leaf leaves[kLeafCount];
  for (unsigned i = 0; i < kLeafCount; ++i) leaves[i] = read_leaf(i);
  // Leaf 1's EBX bits 31-24 are the APIC ID of the core that ran CPUID: they
  // differ between two processes on one machine and decide nothing.
  leaves[0].cpuid[1] &= 0x00ffffffu;
  const unsigned signature = leaves[0].cpuid[0];
  const unsigned family = ((signature >> 8) & 0xf) + ((signature >> 8 & 0xf) == 0xf ? (signature >> 20) & 0xff : 0);
  const unsigned model = ((signature >> 4) & 0xf) | ((signature >> 16 & 0xf) << 4);
  target.cpu = vendor_name + " family " + std::to_string(family) + " model " + std::to_string(model) + " stepping " +
               std::to_string(signature & 0xf);
  for (const Leaf& leaf : leaves) {
    for (unsigned word : leaf.cpuid) append_hex(target.features, word);
    for (unsigned word : leaf.active) append_hex(target.features, word);
  }
  return target;
}

#else

// Elsewhere: the kernel's hardware capability words and platform string,
// and on AArch64 the main ID register (implementer, part, revision).
HostTarget detect() {
  HostTarget target;
  target.triple = KILN_HOST_TRIPLE;
  const char* platform = reinterpret_cast<const char*>(::getauxval(AT_PLATFORM));
  target.cpu = platform != nullptr ? platform : "unknown";
  std::ifstream midr("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  std::string id;
  if (midr >> id) target.cpu += " midr " + id;
  append_hex(target.features, static_cast<unsigned>(::getauxval(AT_HWCAP)));
  append_hex(target.features, static_cast<unsigned>(::getauxval(AT_HWCAP) >> 32));
  append_hex(target.features, static_cast<unsigned>(::getauxval(AT_HWCAP2)));
  append_hex(target.features, static_cast<unsigned>(::getauxval(AT_HWCAP2) >> 32));
  return target;
}

#endif

HostTarget detect_with_libc() {
  HostTarget target = detect();
  // Kernels bind to versioned C library symbols (exp@GLIBC_2.29): a cache
  // shared by hosts with different C libraries must keep their builds apart.
  target.features += " glibc ";
  target.features += gnu_get_libc_version();
  return target;
}

#if defined(KILN_GLIBC_CPUID)

// Each level's features beyond the one below it (the psABI's table; x86-64
// itself is SSE2, which every x86-64 CPU has).
struct LevelFeature {
  int level;
  const char* name;
  bool active;
};

std::vector<LevelFeature> level_features() {
#define KILN_FEATURE(level, name) LevelFeature{level, #name, CPU_FEATURE_ACTIVE(name)}
  return {KILN_FEATURE(1, SSE2),     KILN_FEATURE(2, CMPXCHG16B), KILN_FEATURE(2, LAHF64_SAHF64),
          KILN_FEATURE(2, POPCNT),   KILN_FEATURE(2, SSE3),       KILN_FEATURE(2, SSE4_1),
          KILN_FEATURE(2, SSE4_2),   KILN_FEATURE(2, SSSE3),      KILN_FEATURE(3, AVX),
          KILN_FEATURE(3, AVX2),     KILN_FEATURE(3, BMI1),       KILN_FEATURE(3, BMI2),
          KILN_FEATURE(3, F16C),     KILN_FEATURE(3, FMA),        KILN_FEATURE(3, LZCNT),
          KILN_FEATURE(3, MOVBE),    KILN_FEATURE(3, OSXSAVE),    KILN_FEATURE(4, AVX512F),
          KILN_FEATURE(4, AVX512BW), KILN_FEATURE(4, AVX512CD),   KILN_FEATURE(4, AVX512DQ),
          KILN_FEATURE(4, AVX512VL)};
#undef KILN_FEATURE
}

#endif

// 1 for x86-64, 2-4 for x86-64-v2 to -v4; 0 for anything else.
int level_number(std::string_view name) {
#if defined(KILN_GLIBC_CPUID)
  if (name == "x86-64") return 1;
  if (name == "x86-64-v2") return 2;
  if (name == "x86-64-v3") return 3;
  if (name == "x86-64-v4") return 4;
#endif
  (void)name;
  return 0;
}

}  // namespace

bool is_cpu_level(std::string_view name) { return level_number(name) != 0; }

std::vector<std::string> missing_features(std::string_view level) {
  std::vector<std::string> missing;
#if defined(KILN_GLIBC_CPUID)
  const int wanted = level_number(level);
  for (const LevelFeature& f : level_features())
    if (f.level <= wanted && !f.active) missing.emplace_back(f.name);
#else
  (void)level;
#endif
  return missing;
}

const HostTarget& host_target() {
  static const HostTarget target = detect_with_libc();  // thread-safe initialisation
  return target;
}

}  // namespace kiln::jit
