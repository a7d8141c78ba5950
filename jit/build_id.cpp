#include "jit/build_id.hpp"

#include <elf.h>
#include <fcntl.h>

#include <cstring>
#include <vector>

#include "base/open_file.hpp"
#include "base/posix_io.hpp"

namespace kiln::jit {
namespace {

// A 64-bit little-endian ELF file's GNU build ID, from its PT_NOTE segments:
// the ELF header, the program headers and the notes are all that is read.
class ElfReader {
 public:
  explicit ElfReader(const std::filesystem::path& path) : path_(path), file_(path, O_RDONLY) {}

  base::Result<std::optional<std::string>> build_id() {
    if (file_.fd() < 0) {
      const int error = file_.open_error();
      return failure(base::kind_of_errno(error), error, std::string("open: ") + std::strerror(error));
    }
    Elf64_Ehdr header{};
    if (const base::Result<void> read = read_at(0, &header, sizeof header); !read) return base::failed(read.error());
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return corrupt("not an ELF file");
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
      return corrupt("not a 64-bit little-endian ELF file");
    }
    if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum > 256) return corrupt("unexpected program headers");
    std::vector<Elf64_Phdr> segments(header.e_phnum);
    if (const base::Result<void> read = read_at(header.e_phoff, segments.data(), segments.size() * sizeof(Elf64_Phdr));
        !read)
      return base::failed(read.error());
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type != PT_NOTE || segment.p_filesz > (1u << 20)) continue;
      std::vector<char> notes(segment.p_filesz);
      if (const base::Result<void> read = read_at(segment.p_offset, notes.data(), notes.size()); !read)
        return base::failed(read.error());
      if (std::optional<std::string> id = find_build_id(notes)) return id;
    }
    return std::optional<std::string>();
  }

 private:
  tl::unexpected<base::Failure> failure(base::Failure::Kind kind, int error, const std::string& why) const {
    return base::failed({kind, error, "kiln: cannot read the build ID of '" + path_.string() + "': " + why});
  }
  tl::unexpected<base::Failure> corrupt(const std::string& why) const {
    return failure(base::Failure::Kind::corrupt, 0, why);
  }

  // From the file's first page when it holds the range (the headers and the
  // build ID note nearly always lie there): one pread per file, not three.
  base::Result<void> read_at(std::uint64_t offset, void* out, std::size_t size) {
    if (!head_read_) {
      head_.resize(kHeadSize);
      const base::Result<std::size_t> read = read_some(0, head_.data(), head_.size());
      if (!read) return base::failed(read.error());
      head_.resize(*read);
      head_read_ = true;
    }
    if (offset <= head_.size() && size <= head_.size() - offset) {
      std::memcpy(out, head_.data() + offset, size);
      return {};
    }
    const base::Result<std::size_t> read = read_some(offset, out, size);
    if (!read) return base::failed(read.error());
    if (*read != size) return corrupt("file ends early");
    return {};
  }

  // Up to `size` bytes at `offset`: fewer only at the end of the file.
  base::Result<std::size_t> read_some(std::uint64_t offset, void* out, std::size_t size) const {
    const base::Result<std::size_t> read = base::read_at(file_.fd(), offset, {static_cast<char*>(out), size});
    // read.error().message is "pread: <strerror>"
    if (!read) return failure(read.error().kind, read.error().error_number, read.error().message);
    return *read;
  }

  // Notes are a name and a descriptor, each padded to 4 bytes.
  static std::optional<std::string> find_build_id(const std::vector<char>& notes) {
    auto padded = [](std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; };
    std::size_t at = 0;
    while (notes.size() - at >= sizeof(Elf64_Nhdr)) {
      Elf64_Nhdr note{};
      std::memcpy(&note, notes.data() + at, sizeof note);
      at += sizeof note;
      const std::uint64_t name_size = padded(note.n_namesz), desc_size = padded(note.n_descsz);
      if (name_size > notes.size() - at || desc_size > notes.size() - at - name_size) return std::nullopt;
      const bool gnu = note.n_namesz == sizeof ELF_NOTE_GNU && std::memcmp(notes.data() + at, ELF_NOTE_GNU, sizeof ELF_NOTE_GNU) == 0;
      if (gnu && note.n_type == NT_GNU_BUILD_ID && note.n_descsz != 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        std::string hex;
        for (std::size_t i = 0; i < note.n_descsz; ++i) {
          const auto byte = static_cast<unsigned char>(notes[at + name_size + i]);
          hex += kHex[byte >> 4];
          hex += kHex[byte & 0xf];
        }
        return hex;
      }
      at += name_size + desc_size;
    }
    return std::nullopt;
  }

  static constexpr std::size_t kHeadSize = 4096;
  std::filesystem::path path_;
  base::OpenFile file_;
  std::vector<char> head_;
  bool head_read_ = false;
};

}  // namespace

base::Result<std::optional<std::string>> elf_build_id(const std::filesystem::path& path) {
  return ElfReader(path).build_id();
}

}  // namespace kiln::jit
