// jit/elf_image: kernels that need no dynamic linking, mapped from their file
// without the dynamic loader; every other object is refused with the reason.
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "jit/elf_image.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

using test::compile_for_host;
using test::contains;
using test::TempDir;

// The object written to a file and mapped from it; unmapped at the end.
class MappedFile {
 public:
  MappedFile(const std::vector<char>& binary, const ImagePlan& plan) : plan_(plan) {
    std::ofstream(path_, std::ios::binary).write(binary.data(), static_cast<std::streamsize>(binary.size()));
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    base_ = test::value_of(map_image(fd, plan, "test kernel"));
    ::close(fd);  // the mapping keeps the file
  }
  ~MappedFile() { unmap_image(base_, plan_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  template <typename Fn>
  Fn function() const {
    return reinterpret_cast<Fn>(static_cast<char*>(base_) + plan_.symbol);
  }
  void* base() const { return base_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  TempDir dir_;
  std::filesystem::path path_ = dir_.path() / "kernel.so";
  ImagePlan plan_;
  void* base_ = nullptr;
};

ImagePlan plan_of(const std::vector<char>& binary, const std::string& symbol) {
  std::string why;
  std::optional<ImagePlan> plan = plan_image(binary, symbol, &why);
  EXPECT_TRUE(plan.has_value()) << why;
  return plan.value_or(ImagePlan{});
}

std::string refusal(const std::vector<char>& binary, const std::string& symbol) {
  std::string why;
  if (plan_image(binary, symbol, &why)) return "(mappable)";
  return why;
}

bool loaded_by_the_dynamic_loader(const void* address) {
  struct Search {
    const void* address;
    bool found = false;
  } search{address};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          const auto start = info->dlpi_addr + p.p_vaddr, at = reinterpret_cast<std::uintptr_t>(s->address);
          if (p.p_type == PT_LOAD && at >= start && at < start + p.p_memsz) s->found = true;
        }
        return 0;
      },
      &search);
  return search.found;
}

TEST(ElfImage, MapsAndCallsAKernelThatCallsNothing) {
  const auto binary = compile_for_host(R"(
extern "C" double kiln_t(const double* a, long n) {
  double sum = 0;
  for (long i = 0; i < n; ++i) sum += 2.0 * a[i];
  return sum;
}
)");
  const ImagePlan plan = plan_of(binary, "kiln_t");
  ASSERT_FALSE(plan.segments.empty());
  EXPECT_EQ(plan.span % static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)), 0u);
  MappedFile mapped(binary, plan);
  const auto fn = mapped.function<double (*)(const double*, long)>();
  std::vector<double> a(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  EXPECT_DOUBLE_EQ(fn(a.data(), static_cast<long>(a.size())), 999.0 * 1000.0);
  EXPECT_FALSE(loaded_by_the_dynamic_loader(reinterpret_cast<const void*>(fn)));
}

// The permissions of each mapping of `path` in this process, from /proc/self/maps.
std::vector<std::string> mappings_of(const std::filesystem::path& path) {
  std::ifstream maps("/proc/self/maps");
  std::string suffix(" ");
  suffix.append(path.string());
  std::vector<std::string> out;
  std::string line;
  while (std::getline(maps, line)) {
    if (line.ends_with(suffix))
      out.push_back(line.substr(line.find(' ') + 1, 4));
  }
  return out;
}

// A kernel that calls nothing is linked -z rodynamic (where glibc reads a
// read-only dynamic section, 2.35 on): one read-only executable segment,
// mapped with one mmap of its file and nothing else.
TEST(ElfImage, AKernelThatCallsNothingIsOneMappingOfItsFile) {
  const auto binary = compile_for_host(R"(
extern "C" long kiln_t(const long* a, long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += a[i] * 3;
  return sum;
}
)");
  const ImagePlan plan = plan_of(binary, "kiln_t");
  MappedFile mapped(binary, plan);
  if (test::glibc_reads_readonly_dynamic()) {
    ASSERT_EQ(plan.segments.size(), 1u);
    EXPECT_EQ(plan.segments[0].protection, PROT_READ | PROT_EXEC);
    EXPECT_EQ(mappings_of(mapped.path()), std::vector<std::string>{"r-xp"});
  } else {  // the dynamic section in a writable segment of its own
    EXPECT_EQ(mappings_of(mapped.path()), (std::vector<std::string>{"r-xp", "rw-p"}));
  }
  const std::vector<long> a{1, 2, 3, 4};
  EXPECT_EQ(mapped.function<long (*)(const long*, long)>()(a.data(), 4), 30);
}

TEST(ElfImage, FindsEachOfSeveralFunctions) {
  const auto binary = compile_for_host(R"(
extern "C" long kiln_a(long x) { return x + 1; }
extern "C" long kiln_b(long x) { return x * 3; }
extern "C" long kiln_c(long x) { return x - 7; }
)");
  const ImagePlan a = plan_of(binary, "kiln_a"), b = plan_of(binary, "kiln_b"), c = plan_of(binary, "kiln_c");
  EXPECT_NE(a.symbol, b.symbol);
  MappedFile mapped(binary, b);
  EXPECT_EQ(mapped.function<long (*)(long)>()(5), 15);
  EXPECT_EQ(reinterpret_cast<long (*)(long)>(static_cast<char*>(mapped.base()) + c.symbol)(5), -2);
}

// Writable data and zero fill (.bss past the file's bytes, over several pages) work as after dlopen.
TEST(ElfImage, WritableDataStartsAsInTheFileAndZeroFillStartsZero) {
  const auto binary = compile_for_host(R"(
static long counter = 41;
static double zeros[4096];
extern "C" long kiln_t(long i) {
  double sum = 0;
  for (long k = 0; k < 4096; ++k) sum += zeros[k];
  zeros[i] = 1.0;
  return sum == 0 ? ++counter : -1;
}
)");
  const ImagePlan plan = plan_of(binary, "kiln_t");
  bool zero_fill = false;
  for (const ImagePlan::Segment& s : plan.segments) zero_fill |= s.memory_size > s.file_size;
  EXPECT_TRUE(zero_fill) << "the test means to exercise zero fill";
  MappedFile mapped(binary, plan);
  const auto fn = mapped.function<long (*)(long)>();
  EXPECT_EQ(fn(4095), 42);
  EXPECT_EQ(fn(0), -1);  // zeros[4095] was written
}

TEST(ElfImage, AKernelThatCallsIntoLibmNeedsTheDynamicLoader) {
  const auto binary = compile_for_host(
      "extern \"C\" double kiln_t(double x, double y) { return __builtin_pow(x, y); }\n");
  EXPECT_TRUE(contains(refusal(binary, "kiln_t"), "needs the dynamic loader")) << refusal(binary, "kiln_t");
}

TEST(ElfImage, ASymbolItDoesNotDefineOrThatIsNoFunctionIsRefused) {
  const auto binary = compile_for_host(R"(
extern "C" { double kiln_table[4] = {1, 2, 3, 4}; }
extern "C" double kiln_t(long i) { return kiln_table[i]; }
)");
  EXPECT_TRUE(contains(refusal(binary, "kiln_missing"), "does not define 'kiln_missing'")) << refusal(binary, "kiln_missing");
  EXPECT_TRUE(contains(refusal(binary, "kiln_table"), "'kiln_table' is not a function")) << refusal(binary, "kiln_table");
  EXPECT_EQ(refusal(binary, "kiln_t"), "(mappable)");
}

TEST(ElfImage, ACutObjectIsRefusedAtEveryLength) {
  const auto binary = compile_for_host("extern \"C\" int kiln_t() { return 7; }\n");
  const ImagePlan whole = plan_of(binary, "kiln_t");
  std::uint64_t mapped_end = 0;  // past the last byte a segment maps
  for (const ImagePlan::Segment& s : whole.segments) mapped_end = std::max(mapped_end, s.offset + s.file_size);
  ASSERT_GT(mapped_end, 0u);
  // Every cut that removes a mapped byte is refused; none is read past.
  for (std::size_t size = 0; size < mapped_end; ++size) {
    const std::vector<char> cut(binary.begin(), binary.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_FALSE(plan_image(cut, "kiln_t")) << "cut to " << size << " of " << binary.size() << " bytes";
  }
  EXPECT_TRUE(contains(refusal(std::vector<char>(binary.begin(), binary.begin() + 100), "kiln_t"), "cut short"));
}

// Garbled bytes anywhere: a refusal or a plan, never a read outside the bytes
// (run under a sanitizer, this is where one would show).
TEST(ElfImage, GarbledObjectsArePlannedOrRefusedWithoutReadingPastThem) {
  const auto binary = compile_for_host("extern \"C\" int kiln_t() { return 7; }\n");
  std::mt19937 random(12345);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<char> garbled = binary;
    for (int flips = 1 + trial % 4; flips > 0; --flips)
      garbled[random() % garbled.size()] = static_cast<char>(random());
    std::string why;
    const std::optional<ImagePlan> plan = plan_image(garbled, "kiln_t", &why);
    if (plan) {
      EXPECT_LE(plan->symbol, plan->span);
    } else {
      EXPECT_FALSE(why.empty());
    }
  }
}

TEST(ElfImage, AMappingFailureNamesTheCall) {
  const auto binary = compile_for_host("extern \"C\" int kiln_t() { return 7; }\n");
  const ImagePlan plan = plan_of(binary, "kiln_t");
  const base::Result<void*> mapped = map_image(-1, plan, "kernel X");
  ASSERT_FALSE(mapped.has_value());
  EXPECT_EQ(mapped.error().error_number, EBADF);
  EXPECT_TRUE(contains(mapped.error().message, "kiln: cannot map kernel X: mmap: ")) << mapped.error().message;
}

}  // namespace
}  // namespace kiln::jit
