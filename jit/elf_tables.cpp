#include "jit/elf_tables.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace kiln::jit {
namespace {

bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// Relocations kiln's objects have (lld, -z now): anything else (TLS, IFUNC
// resolvers, copies) is refused rather than checked.
bool known_relocation(std::uint32_t type) {
#if defined(__x86_64__)
  return type == R_X86_64_NONE || type == R_X86_64_64 || type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT ||
         type == R_X86_64_RELATIVE;
#elif defined(__aarch64__)
  return type == R_AARCH64_NONE || type == R_AARCH64_ABS64 || type == R_AARCH64_GLOB_DAT ||
         type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_RELATIVE;
#else
  return false;
#endif
}

// The dynamic section's entries this check reads (0: absent).
struct Dynamic {
  std::uint64_t strtab = 0, strsz = 0, symtab = 0, syment = sizeof(Elf64_Sym), hash = 0, gnu_hash = 0;
  std::uint64_t versym = 0, verneed = 0, verdef = 0;
  std::uint64_t rela = 0, relasz = 0, relaent = sizeof(Elf64_Rela), jmprel = 0, pltrelsz = 0, pltrel = DT_RELA;
  std::vector<std::uint64_t> names;   // string offsets: DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH
  std::vector<std::uint64_t> needed;  // DT_NEEDED's alone
  std::int64_t unchecked = -1;       // a tag whose table this check does not know (DT_REL, DT_RELR, DT_TEXTREL)
};

class Tables {
 public:
  Tables(std::span<const char> binary, const std::vector<const Elf64_Phdr*>& loads) : binary_(binary), loads_(loads) {}

  std::string problem(const Elf64_Phdr& dynamic) {
    read_dynamic(dynamic);
    if (d_.unchecked >= 0)
      return "its dynamic section asks for relocations kiln's objects never have (dynamic tag " +
             std::to_string(d_.unchecked) + ")";
    if (d_.symtab == 0 && d_.strtab == 0 && d_.names.empty()) return {};
    if (std::string p = strings(); !p.empty()) return p;
    if (d_.symtab == 0) {  // relocations then name no symbol
      symbol_count_ = 0;
      if (std::string p = relocations(d_.rela, d_.relasz, d_.relaent, "relocation"); !p.empty()) return p;
      return relocations(d_.jmprel, d_.pltrelsz, sizeof(Elf64_Rela), "PLT relocation");
    }
    if (d_.syment != sizeof(Elf64_Sym)) return "its symbols have an unexpected size";
    if (d_.hash == 0 && d_.gnu_hash == 0) return "its symbol table has no hash table";
    if (std::string p = sysv_hash(); !p.empty()) return p;
    if (std::string p = gnu_hash(); !p.empty()) return p;
    if (std::string p = symbols(); !p.empty()) return p;
    if (std::string p = versions(); !p.empty()) return p;
    if (std::string p = relocations(d_.rela, d_.relasz, d_.relaent, "relocation"); !p.empty()) return p;
    if (d_.pltrelsz != 0 && d_.pltrel != DT_RELA) return "its PLT relocations are not of the RELA kind";
    return relocations(d_.jmprel, d_.pltrelsz, sizeof(Elf64_Rela), "PLT relocation");
  }

 private:
  template <class T>
  T at(std::uint64_t offset) const {  // the caller checked the range
    T value;
    std::memcpy(&value, binary_.data() + offset, sizeof value);
    return value;
  }

  // The file offset of [address, address + size) when it lies within the file
  // bytes of one loadable segment: what the loader reads at that address.
  std::optional<std::uint64_t> file_range(std::uint64_t address, std::uint64_t size) const {
    for (const Elf64_Phdr* l : loads_)
      if (address >= l->p_vaddr && fits(address - l->p_vaddr, size, l->p_filesz)) return l->p_offset + address - l->p_vaddr;
    return std::nullopt;
  }
  bool in_segment(std::uint64_t address, std::uint64_t size, std::uint32_t flag) const {
    for (const Elf64_Phdr* l : loads_)
      if ((l->p_flags & flag) && address >= l->p_vaddr && fits(address - l->p_vaddr, size, l->p_memsz)) return true;
    return false;
  }

  // A name in the string table (strings() checked: it ends in a NUL).
  std::string_view string_at(std::uint64_t offset) const { return binary_.data() + *strtab_offset_ + offset; }

  std::uint64_t span_end() const { return loads_.back()->p_vaddr + loads_.back()->p_memsz; }

  void read_dynamic(const Elf64_Phdr& dynamic) {
    for (std::uint64_t at_ = 0; at_ + sizeof(Elf64_Dyn) <= dynamic.p_filesz; at_ += sizeof(Elf64_Dyn)) {
      const auto entry = at<Elf64_Dyn>(dynamic.p_offset + at_);
      const std::uint64_t v = entry.d_un.d_val;
      switch (entry.d_tag) {
        case DT_NULL: return;
        case DT_STRTAB: d_.strtab = v; break;
        case DT_STRSZ: d_.strsz = v; break;
        case DT_SYMTAB: d_.symtab = v; break;
        case DT_SYMENT: d_.syment = v; break;
        case DT_HASH: d_.hash = v; break;
        case DT_GNU_HASH: d_.gnu_hash = v; break;
        case DT_VERSYM: d_.versym = v; break;
        case DT_VERNEED: d_.verneed = v; break;
        case DT_VERDEF: d_.verdef = v; break;
        case DT_RELA: d_.rela = v; break;
        case DT_RELASZ: d_.relasz = v; break;
        case DT_RELAENT: d_.relaent = v; break;
        case DT_JMPREL: d_.jmprel = v; break;
        case DT_PLTRELSZ: d_.pltrelsz = v; break;
        case DT_PLTREL: d_.pltrel = v; break;
        case DT_NEEDED: d_.needed.push_back(v); d_.names.push_back(v); break;
        case DT_SONAME: case DT_RPATH: case DT_RUNPATH: d_.names.push_back(v); break;
        case DT_REL: case DT_RELSZ: case DT_TEXTREL: case DT_RELR: case DT_RELRSZ:
          if (d_.unchecked < 0) d_.unchecked = entry.d_tag;
          break;
        default: break;
      }
    }
  }

  // The loader reads names as C strings: each must start inside the table,
  // and the table must end in a NUL.
  std::string strings() {
    const std::optional<std::uint64_t> table = d_.strsz == 0 ? std::nullopt : file_range(d_.strtab, d_.strsz);
    if (!table) return "its string table lies outside its segments' file bytes";
    if (binary_[*table + d_.strsz - 1] != '\0') return "its string table does not end in a NUL";
    strtab_offset_ = table;
    for (const std::uint64_t name : d_.names)
      if (name >= d_.strsz) return "its dynamic section names a string past its string table";
    return {};
  }

  // SysV: nbucket, nchain, the buckets, the chains; every index below nchain
  // (the number of symbols), and no chain that loops (the loader would walk it forever).
  std::string sysv_hash() {
    if (d_.hash == 0) return {};
    const std::optional<std::uint64_t> head = file_range(d_.hash, 8);
    if (!head) return "its SysV hash table lies outside its segments' file bytes";
    const auto nbucket = at<std::uint32_t>(*head), nchain = at<std::uint32_t>(*head + 4);
    const std::optional<std::uint64_t> table = file_range(d_.hash, 8 + 4 * (std::uint64_t{nbucket} + nchain));
    if (!table) return "its SysV hash table lies outside its segments' file bytes";
    if (nbucket == 0) return "its SysV hash table has no buckets";
    const std::uint64_t chains = *table + 8 + 4 * std::uint64_t{nbucket};
    std::vector<std::uint32_t> walked(nchain, 0);  // which bucket's walk passed each symbol
    for (std::uint32_t b = 0; b < nbucket; ++b) {
      for (std::uint32_t i = at<std::uint32_t>(*table + 8 + 4 * std::uint64_t{b}); i != STN_UNDEF;
           i = at<std::uint32_t>(chains + 4 * std::uint64_t{i})) {
        if (i >= nchain) return "its SysV hash table holds a symbol index past its symbols";
        if (walked[i] == b + 1) return "its SysV hash table has a chain that loops";
        if (walked[i] != 0) break;  // joins a chain already walked to its end
        walked[i] = b + 1;
      }
    }
    symbol_count_ = nchain;
    return {};
  }

  // GNU: nbuckets, the first hashed symbol, the filter's size and shift, the
  // filter, the buckets, then one chain word per symbol from the first hashed
  // on, the last of a chain marked by its low bit. The loader divides by the
  // bucket count, masks with the filter's size less one, and walks a chain to
  // its mark: each must hold.
  std::string gnu_hash() {
    if (d_.gnu_hash == 0) return {};
    const std::optional<std::uint64_t> head = file_range(d_.gnu_hash, 16);
    if (!head) return "its GNU hash table lies outside its segments' file bytes";
    const auto nbuckets = at<std::uint32_t>(*head), first = at<std::uint32_t>(*head + 4),
               bloom = at<std::uint32_t>(*head + 8);
    if (nbuckets == 0) return "its GNU hash table has no buckets";
    if (bloom == 0 || (bloom & (bloom - 1)) != 0) return "its GNU hash table's filter size is not a power of two";
    const std::uint64_t buckets_at = d_.gnu_hash + 16 + 8 * std::uint64_t{bloom};
    const std::optional<std::uint64_t> table =
        file_range(d_.gnu_hash, 16 + 8 * std::uint64_t{bloom} + 4 * std::uint64_t{nbuckets});
    if (!table) return "its GNU hash table lies outside its segments' file bytes";
    const std::uint64_t chain_at = buckets_at + 4 * std::uint64_t{nbuckets};
    std::uint64_t count = first;
    std::vector<bool> walked;  // chain words already walked to their chain's end
    for (std::uint32_t b = 0; b < nbuckets; ++b) {
      const auto start = at<std::uint32_t>(*table + 16 + 8 * std::uint64_t{bloom} + 4 * std::uint64_t{b});
      if (start == 0) continue;
      if (start < first) return "its GNU hash table has a bucket below its first hashed symbol";
      for (std::uint64_t i = start;; ++i) {
        const std::uint64_t slot = i - first;
        if (slot < walked.size() && walked[slot]) break;
        const std::optional<std::uint64_t> word = file_range(chain_at + 4 * slot, 4);
        if (!word) return "its GNU hash table has a chain that runs past its segments' file bytes";
        if (slot >= walked.size()) walked.resize(slot + 1, false);
        walked[slot] = true;
        count = std::max(count, i + 1);
        if (at<std::uint32_t>(*word) & 1) break;
      }
    }
    if (symbol_count_ && count > *symbol_count_) return "its GNU hash table holds a symbol index past its symbols";
    if (!symbol_count_) symbol_count_ = count;
    return {};
  }

  // Every symbol the hash tables reach: named inside the string table, of a
  // kind kiln's objects have, defined inside the object (a function in code).
  std::string symbols() {
    const std::uint64_t count = *symbol_count_;
    const std::optional<std::uint64_t> table =
        count > (std::uint64_t{1} << 24) ? std::nullopt : file_range(d_.symtab, count * sizeof(Elf64_Sym));
    if (!table) return "its symbol table lies outside its segments' file bytes";
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto sym = at<Elf64_Sym>(*table + i * sizeof(Elf64_Sym));
      const std::string which = "its symbol " + std::to_string(i);
      if (sym.st_name >= d_.strsz) return which + " is named past its string table";
      const unsigned type = ELF64_ST_TYPE(sym.st_info), bind = ELF64_ST_BIND(sym.st_info);
      if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC && type != STT_SECTION && type != STT_FILE)
        return which + " is of a kind kiln's objects never have (type " + std::to_string(type) + ")";
      if (bind != STB_LOCAL && bind != STB_GLOBAL && bind != STB_WEAK)
        return which + " has a binding kiln's objects never have (" + std::to_string(bind) + ")";
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || type == STT_SECTION || type == STT_FILE) continue;
      // A function is called where it says (dlsym's address): inside code.
      // Data and linker-made symbols (_end) only name an address, up to the end.
      if (type == STT_FUNC ? !in_segment(sym.st_value, std::max<std::uint64_t>(sym.st_size, 1), PF_X)
                           : sym.st_value > span_end())
        return which + " lies outside its " + (type == STT_FUNC ? "code" : "segments");
    }
    return {};
  }

  // Version needs and definitions: every record and name inside, and the
  // highest version index, which sizes the loader's array that each symbol's
  // version index (DT_VERSYM) reads.
  std::string versions() {
    std::uint64_t highest = 0;
    int records = 0;
    for (std::uint64_t at_ = d_.verneed; d_.verneed != 0;) {
      const std::optional<std::uint64_t> need = file_range(at_, sizeof(Elf64_Verneed));
      if (!need || ++records > 4096) return "its version needs lie outside its segments' file bytes";
      const auto vn = at<Elf64_Verneed>(*need);
      if (vn.vn_file >= d_.strsz) return "its version needs name a file past its string table";
      // glibc asserts (and exits the process) when the file is none it needs.
      if (std::none_of(d_.needed.begin(), d_.needed.end(), [&](std::uint64_t n) { return string_at(n) == string_at(vn.vn_file); }))
        return "its version needs name a library it does not need";
      std::uint64_t aux_at = at_ + vn.vn_aux;
      // Walked as glibc walks them: to the entry whose next is 0, whatever vn_cnt says.
      for (;;) {
        const std::optional<std::uint64_t> aux = file_range(aux_at, sizeof(Elf64_Vernaux));
        if (!aux || ++records > 4096) return "its version needs lie outside its segments' file bytes";
        const auto vna = at<Elf64_Vernaux>(*aux);
        if (vna.vna_name >= d_.strsz) return "its version needs name a version past its string table";
        highest = std::max<std::uint64_t>(highest, vna.vna_other & 0x7fff);
        if (vna.vna_next == 0) break;
        aux_at += vna.vna_next;
      }
      if (vn.vn_next == 0) break;
      at_ += vn.vn_next;
    }
    for (std::uint64_t at_ = d_.verdef; d_.verdef != 0;) {
      const std::optional<std::uint64_t> def = file_range(at_, sizeof(Elf64_Verdef));
      if (!def || ++records > 4096) return "its version definitions lie outside its segments' file bytes";
      const auto vd = at<Elf64_Verdef>(*def);
      const std::optional<std::uint64_t> aux = file_range(at_ + vd.vd_aux, sizeof(Elf64_Verdaux));
      if (!aux || at<Elf64_Verdaux>(*aux).vda_name >= d_.strsz)  // read whatever vd_cnt says
        return "its version definitions name a version past its string table";
      highest = std::max<std::uint64_t>(highest, vd.vd_ndx & 0x7fff);
      if (vd.vd_next == 0) break;
      at_ += vd.vd_next;
    }
    if (d_.versym == 0) return {};
    const std::optional<std::uint64_t> table = file_range(d_.versym, *symbol_count_ * 2);
    if (!table) return "its symbol versions lie outside its segments' file bytes";
    if (highest == 0) return {};  // without needs or definitions the loader reads no version
    for (std::uint64_t i = 0; i < *symbol_count_; ++i)
      if ((at<std::uint16_t>(*table + 2 * i) & 0x7fff) > highest)
        return "its symbol " + std::to_string(i) + " has a version index past its versions";
    return {};
  }

  // Each relocation of a kind kiln's objects have, of a symbol in the table,
  // writing into a writable segment (-z now: no text relocations).
  std::string relocations(std::uint64_t address, std::uint64_t size, std::uint64_t entry, const std::string& what) {
    if (size == 0) return {};
    if (entry != sizeof(Elf64_Rela) || size % sizeof(Elf64_Rela) != 0) return "its " + what + "s have an unexpected size";
    const std::optional<std::uint64_t> table = file_range(address, size);
    if (!table) return "its " + what + "s lie outside its segments' file bytes";
    for (std::uint64_t at_ = 0; at_ < size; at_ += sizeof(Elf64_Rela)) {
      const auto r = at<Elf64_Rela>(*table + at_);
      const std::uint32_t type = ELF64_R_TYPE(r.r_info), sym = ELF64_R_SYM(r.r_info);
      if (!known_relocation(type)) return "its " + what + "s hold one of a kind kiln's objects never have (type " + std::to_string(type) + ")";
      if (sym >= *symbol_count_) return "its " + what + "s name a symbol past its symbols";
      if (type != 0 && !in_segment(r.r_offset, 8, PF_W)) return "its " + what + "s write outside its writable segments";
    }
    return {};
  }

  std::span<const char> binary_;
  const std::vector<const Elf64_Phdr*>& loads_;
  Dynamic d_;
  std::optional<std::uint64_t> symbol_count_;
  std::optional<std::uint64_t> strtab_offset_;  // the string table's file offset, once checked
};

}  // namespace

std::string dynamic_tables_problem(std::span<const char> binary, const std::vector<const Elf64_Phdr*>& loads,
                                   const Elf64_Phdr& dynamic) {
  return Tables(binary, loads).problem(dynamic);
}

}  // namespace kiln::jit
