#include "jit/host_target.hpp"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

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

// LLVM's names of the features its code generator may use in plain code
// (arithmetic, vector, bit and memory instructions), each with whether glibc
// finds it usable here: what a named CPU's features are checked against.
// Features only intrinsics or the OS use (x87, fsgsbase, invpcid, shstk,
// xsaves, sgx, amx-*, rdrnd, waitpkg, ...) are left out: glibc does not mark
// several of them usable even where they are, and no kernel emits them.
std::vector<std::pair<std::string_view, bool>> usable_by_llvm_name() {
#define KILN_LLVM(llvm, glibc) std::pair<std::string_view, bool>{llvm, CPU_FEATURE_ACTIVE(glibc)}
  return {KILN_LLVM("adx", ADX), KILN_LLVM("aes", AES), KILN_LLVM("avx", AVX), KILN_LLVM("avx2", AVX2),
          KILN_LLVM("avx512bf16", AVX512_BF16), KILN_LLVM("avx512bitalg", AVX512_BITALG),
          KILN_LLVM("avx512bw", AVX512BW), KILN_LLVM("avx512cd", AVX512CD), KILN_LLVM("avx512dq", AVX512DQ),
          KILN_LLVM("avx512f", AVX512F), KILN_LLVM("avx512fp16", AVX512_FP16), KILN_LLVM("avx512ifma", AVX512_IFMA),
          KILN_LLVM("avx512vbmi", AVX512_VBMI), KILN_LLVM("avx512vbmi2", AVX512_VBMI2),
          KILN_LLVM("avx512vl", AVX512VL), KILN_LLVM("avx512vnni", AVX512_VNNI),
          KILN_LLVM("avx512vp2intersect", AVX512_VP2INTERSECT), KILN_LLVM("avx512vpopcntdq", AVX512_VPOPCNTDQ),
          KILN_LLVM("avxvnni", AVX_VNNI), KILN_LLVM("bmi", BMI1), KILN_LLVM("bmi2", BMI2), KILN_LLVM("cmov", CMOV),
          KILN_LLVM("cx16", CMPXCHG16B), KILN_LLVM("cx8", CX8), KILN_LLVM("f16c", F16C), KILN_LLVM("fma", FMA),
          KILN_LLVM("fma4", FMA4), KILN_LLVM("fxsr", FXSR), KILN_LLVM("gfni", GFNI), KILN_LLVM("lzcnt", LZCNT),
          KILN_LLVM("mmx", MMX), KILN_LLVM("movbe", MOVBE), KILN_LLVM("pclmul", PCLMULQDQ),
          KILN_LLVM("popcnt", POPCNT), KILN_LLVM("prfchw", PREFETCHW), KILN_LLVM("sahf", LAHF64_SAHF64),
          KILN_LLVM("sha", SHA), KILN_LLVM("sse", SSE), KILN_LLVM("sse2", SSE2), KILN_LLVM("sse3", SSE3),
          KILN_LLVM("sse4.1", SSE4_1), KILN_LLVM("sse4.2", SSE4_2), KILN_LLVM("sse4a", SSE4A),
          KILN_LLVM("ssse3", SSSE3), KILN_LLVM("tbm", TBM), KILN_LLVM("vaes", VAES),
          KILN_LLVM("vpclmulqdq", VPCLMULQDQ), KILN_LLVM("xop", XOP), KILN_LLVM("xsave", XSAVE)};
#undef KILN_LLVM
}

const CpuFeatures* find_cpu(std::string_view name) {
  for (std::size_t i = 0; i < kCpuTableSize; ++i)
    if (name == kCpuTable[i].name) return &kCpuTable[i];
  return nullptr;
}

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

bool is_known_cpu(std::string_view name) {
#if defined(KILN_GLIBC_CPUID)
  return is_cpu_level(name) || (!name.empty() && find_cpu(name) != nullptr);
#else
  (void)name;
  return false;
#endif
}

std::vector<std::string> missing_features(std::string_view cpu) {
  std::vector<std::string> missing;
#if defined(KILN_GLIBC_CPUID)
  if (const int wanted = level_number(cpu)) {
    for (const LevelFeature& f : level_features())
      if (f.level <= wanted && !f.active) missing.emplace_back(f.name);
    return missing;
  }
  const CpuFeatures* named = find_cpu(cpu);
  if (named == nullptr) return missing;
  const auto usable = usable_by_llvm_name();
  std::string_view list = named->features;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view feature = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    for (const auto& [name, active] : usable)
      if (name == feature && !active) missing.emplace_back(feature);
  }
#else
  (void)cpu;
#endif
  return missing;
}

const HostTarget& host_target() {
  static const HostTarget target = detect_with_libc();  // thread-safe initialisation
  return target;
}

}  // namespace kiln::jit
