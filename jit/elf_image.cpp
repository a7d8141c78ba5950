#include "jit/elf_image.hpp"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jit/byte_range.hpp"
#include "jit/shared_object_loader.hpp"

namespace kiln::jit {
namespace {

std::uint64_t page_size() {
  static const auto size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return size;
}
std::uint64_t page_down(std::uint64_t a) { return a & ~(page_size() - 1); }
std::uint64_t page_up(std::uint64_t a) { return page_down(a + page_size() - 1); }

// A checked reader of the object's bytes: every read names what it reads, and
// one past the end makes the whole plan fail with that name.
class Bytes {
 public:
  explicit Bytes(std::span<const char> bytes) : bytes_(bytes) {}
  template <class T>
  std::optional<T> at(std::uint64_t offset) const {
    if (!fits(offset, sizeof(T), bytes_.size())) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return value;
  }
  std::size_t size() const { return bytes_.size(); }
  const char* data() const { return bytes_.data(); }

 private:
  std::span<const char> bytes_;
};

// What the dynamic section says, where it says something mapping needs.
struct Dynamic {
  std::uint64_t symtab = 0, strtab = 0, strsz = 0, gnu_hash = 0, sysv_hash = 0;
};

int protection_of(std::uint32_t flags) {
  return ((flags & PF_R) ? PROT_READ : 0) | ((flags & PF_W) ? PROT_WRITE : 0) | ((flags & PF_X) ? PROT_EXEC : 0);
}

class Planner {
 public:
  Planner(std::span<const char> binary, std::string* why) : bytes_(binary), why_(why) {}

  std::optional<ImagePlan> plan(const std::string& symbol) {
    if (const std::string problem = shared_object_problem({bytes_.data(), bytes_.size()}); !problem.empty())
      return fail("it is " + problem);
    if (!read_segments() || !read_dynamic()) return std::nullopt;
    return find_symbol(symbol) ? std::optional<ImagePlan>(std::move(plan_)) : std::nullopt;
  }

 private:
  std::nullopt_t fail(std::string why) {
    if (why_ != nullptr) *why_ = std::move(why);
    return std::nullopt;
  }

  // The segments' layout was checked by shared_object_problem(), the one
  // check of program headers that dlopen's bytes pass too: here only what
  // mapping without the loader cannot do.
  bool read_segments() {
    const Elf64_Ehdr header = *bytes_.at<Elf64_Ehdr>(0);  // shared_object_problem() read it
    for (std::size_t i = 0; i < header.e_phnum; ++i) {
      const Elf64_Phdr p = *bytes_.at<Elf64_Phdr>(header.e_phoff + i * sizeof(Elf64_Phdr));
      if (p.p_type == PT_TLS) return fail("it has thread-local storage"), false;
      if (p.p_type == PT_INTERP) return fail("it names a program interpreter"), false;
      if (p.p_type == PT_DYNAMIC) dynamic_ = p;
      if (p.p_type != PT_LOAD) continue;
      plan_.segments.push_back({p.p_vaddr, p.p_offset, p.p_filesz, p.p_memsz, protection_of(p.p_flags)});
      plan_.span = page_up(p.p_vaddr + p.p_memsz);  // ascending: the last one ends the span
    }
    return true;
  }

  // Only tags whose meaning mapping honours by doing nothing: any other one
  // (DT_NEEDED, relocations, initialisers...) is work for the dynamic loader.
  bool read_dynamic() {
    for (std::uint64_t at = dynamic_.p_offset; at < dynamic_.p_offset + dynamic_.p_filesz; at += sizeof(Elf64_Dyn)) {
      const std::optional<Elf64_Dyn> entry = bytes_.at<Elf64_Dyn>(at);
      if (!entry) return fail("its dynamic section is cut short"), false;
      const std::uint64_t value = entry->d_un.d_val;
      switch (entry->d_tag) {
        case DT_NULL: return true;
        case DT_SYMTAB: dyn_.symtab = value; break;
        case DT_STRTAB: dyn_.strtab = value; break;
        case DT_STRSZ: dyn_.strsz = value; break;
        case DT_GNU_HASH: dyn_.gnu_hash = value; break;
        case DT_HASH: dyn_.sysv_hash = value; break;
        case DT_SYMENT:
          if (value != sizeof(Elf64_Sym)) return fail("its symbols have an unexpected size"), false;
          break;
        case DT_SONAME: case DT_FLAGS: case DT_FLAGS_1: case DT_BIND_NOW: case DT_DEBUG:
          break;
        default:
          return fail("it needs the dynamic loader (dynamic tag " + std::to_string(entry->d_tag) + ")"), false;
      }
    }
    return fail("its dynamic section has no end"), false;
  }

  // The file offset of an address in a segment's file bytes.
  std::optional<std::uint64_t> file_offset(std::uint64_t address) const {
    for (const ImagePlan::Segment& s : plan_.segments)
      if (address >= s.address && address - s.address < s.file_size) return address - s.address + s.offset;
    return std::nullopt;
  }

  std::optional<Elf64_Sym> symbol_at(std::uint64_t index) const {
    const std::optional<std::uint64_t> table = file_offset(dyn_.symtab);
    if (!table || index > (std::uint64_t{1} << 32)) return std::nullopt;
    return bytes_.at<Elf64_Sym>(*table + index * sizeof(Elf64_Sym));
  }

  bool named(const Elf64_Sym& sym, const std::string& name) const {
    const std::optional<std::uint64_t> strings = file_offset(dyn_.strtab);
    if (!strings || sym.st_name >= dyn_.strsz || !fits(sym.st_name, name.size() + 1, dyn_.strsz) ||
        !fits(*strings + sym.st_name, name.size() + 1, bytes_.size()))
      return false;
    return std::memcmp(bytes_.data() + *strings + sym.st_name, name.c_str(), name.size() + 1) == 0;
  }

  // The symbol's index through the GNU hash table (the one lld writes by
  // default), else by scanning the SysV table's nchain symbols.
  std::optional<std::uint64_t> lookup(const std::string& name) const {
    if (dyn_.gnu_hash != 0) return gnu_lookup(name);
    if (dyn_.sysv_hash != 0) {
      const std::optional<std::uint64_t> table = file_offset(dyn_.sysv_hash);
      const std::optional<std::uint32_t> nchain = table ? bytes_.at<std::uint32_t>(*table + 4) : std::nullopt;
      for (std::uint64_t i = 1; nchain && i < *nchain; ++i) {
        const std::optional<Elf64_Sym> sym = symbol_at(i);
        if (!sym) return std::nullopt;
        if (named(*sym, name)) return i;
      }
    }
    return std::nullopt;
  }

  std::optional<std::uint64_t> gnu_lookup(const std::string& name) const {
    const std::optional<std::uint64_t> table = file_offset(dyn_.gnu_hash);
    if (!table) return std::nullopt;
    const auto word = [&](std::uint64_t i) { return bytes_.at<std::uint32_t>(*table + 4 * i); };
    const std::optional<std::uint32_t> buckets = word(0), first = word(1), bloom_words = word(2);
    if (!buckets || !first || !bloom_words || *buckets == 0) return std::nullopt;
    std::uint32_t hash = 5381;
    for (const unsigned char c : name) hash = hash * 33 + c;
    const std::uint64_t bucket_base = 4 + 2 * std::uint64_t{*bloom_words};  // in 32-bit words (64-bit bloom words)
    const std::optional<std::uint32_t> start = word(bucket_base + hash % *buckets);
    if (!start || *start < *first) return std::nullopt;
    const std::uint64_t chain_base = bucket_base + *buckets;
    for (std::uint64_t i = *start;; ++i) {
      const std::optional<std::uint32_t> chain = word(chain_base + (i - *first));
      if (!chain) return std::nullopt;
      if ((*chain | 1) == (hash | 1)) {
        const std::optional<Elf64_Sym> sym = symbol_at(i);
        if (sym && named(*sym, name)) return i;
      }
      if (*chain & 1) return std::nullopt;  // the chain's last symbol
    }
  }

  bool find_symbol(const std::string& name) {
    if (dyn_.symtab == 0 || dyn_.strtab == 0) return fail("it has no dynamic symbol table"), false;
    const std::optional<std::uint64_t> index = lookup(name);
    const std::optional<Elf64_Sym> sym = index ? symbol_at(*index) : std::nullopt;
    if (!sym || sym->st_shndx == SHN_UNDEF) return fail("it does not define '" + name + "'"), false;
    if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC) return fail("'" + name + "' is not a function"), false;
    for (const ImagePlan::Segment& s : plan_.segments) {
      if ((s.protection & PROT_EXEC) && sym->st_value >= s.address && sym->st_value - s.address < s.memory_size) {
        plan_.symbol = sym->st_value;
        return true;
      }
    }
    return fail("'" + name + "' lies outside its code"), false;
  }

  Bytes bytes_;
  std::string* why_;
  ImagePlan plan_;
  Elf64_Phdr dynamic_{};
  Dynamic dyn_;
};

base::Failure mapping_failure(const std::string& what, const char* call, int error) {
  return {base::kind_of_errno(error), error, "kiln: cannot map " + what + ": " + call + ": " + std::strerror(error)};
}

// One segment: its file bytes mapped from `fd`, the rest of its last file
// page zeroed, and whole pages of zeros past that.
base::Result<void> map_segment(char* image, int fd, const ImagePlan::Segment& s, const std::string& what) {
  const std::uint64_t start = page_down(s.address), file_end = s.address + s.file_size;
  if (s.file_size > 0) {
    const std::uint64_t length = page_up(file_end) - start;
    const auto offset = static_cast<off_t>(s.offset - (s.address - start));
    if (::mmap(image + start, length, s.protection, MAP_PRIVATE | MAP_FIXED, fd, offset) == MAP_FAILED)
      return base::failed(mapping_failure(what, "mmap", errno));
  }
  if (s.memory_size == s.file_size) return {};
  if (s.file_size > 0 && page_up(file_end) > file_end) std::memset(image + file_end, 0, page_up(file_end) - file_end);
  const std::uint64_t zeros = s.file_size > 0 ? page_up(file_end) : start, end = page_up(s.address + s.memory_size);
  if (end > zeros && ::mmap(image + zeros, end - zeros, s.protection, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
                            0) == MAP_FAILED)
    return base::failed(mapping_failure(what, "mmap", errno));
  return {};
}

}  // namespace

std::optional<ImagePlan> plan_image(std::span<const char> binary, const std::string& symbol, std::string* why) {
  return Planner(binary, why).plan(symbol);
}

base::Result<void*> map_image(int fd, const ImagePlan& plan, const std::string& what) {
  // One segment that is the file's start and has no zero fill (a kernel
  // linked -z rodynamic, jit/compiler/linker.cpp): the image is that mapping.
  if (plan.segments.size() == 1) {
    const ImagePlan::Segment& s = plan.segments.front();
    if (s.address == 0 && s.offset == 0 && s.memory_size == s.file_size) {  // so span is its pages
      void* image = ::mmap(nullptr, plan.span, s.protection, MAP_PRIVATE, fd, 0);
      if (image == MAP_FAILED) return base::failed(mapping_failure(what, "mmap", errno));
      return image;
    }
  }
  // Else the whole span first, inaccessible: the segments then go to fixed
  // places in it, and pages between them stay inaccessible.
  void* reserved = ::mmap(nullptr, plan.span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) return base::failed(mapping_failure(what, "mmap", errno));
  for (const ImagePlan::Segment& s : plan.segments) {
    if (base::Result<void> mapped = map_segment(static_cast<char*>(reserved), fd, s, what); !mapped) {
      ::munmap(reserved, plan.span);
      return base::failed(std::move(mapped.error()));
    }
  }
  return reserved;
}

void unmap_image(void* base, const ImagePlan& plan) {
  if (base != nullptr) ::munmap(base, plan.span);
}

}  // namespace kiln::jit
