#include "jit/compiler/linker.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cxxabi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string_view>
#include <utility>
#include <vector>

#include <lld/Common/Driver.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include "jit/compiler/llvm_options.hpp"

LLD_HAS_DRIVER(elf)

namespace kiln::jit::compiler {
namespace {

// What every link passes besides its files. -z now: every symbol is bound at
// dlopen, so a kernel never takes a lazy-binding detour on its first call.
// -z defs: nothing left unresolved.
// -Bsymbolic: a kernel's own functions and globals bind within the kernel,
// never to a same-named symbol of the process (libm's cbrt, libc's optind).
// --as-needed: a kernel that calls no libm function does not need libm.
// --no-rosegment: the ELF header and symbol tables share the code's segment,
// so dlopen maps two segments, not three (~1 µs of a ~10 µs load measured);
// what becomes executable is a few hundred bytes of tables, as before 2018.
constexpr std::array kFlags = {"-shared",        "-z",          "now",           "-z",        "defs",
                               "-z",             "noexecstack", "-Bsymbolic",    "--no-rosegment",
                               "--hash-style=gnu", "--build-id=none", "--as-needed", "--no-undefined-version"};
// -z relro makes the GOT read-only once bound: only an object that calls into
// libraries has one. Without a GOT it would only pad the writable segment (the
// dynamic section) to a page of zeros that every load writes, and add an
// mprotect: self-contained kernels get -z norelro (jit/elf_image.hpp).
constexpr const char* kRelroWithLibraries = "relro";
constexpr const char* kRelroSelfContained = "norelro";

// -z rodynamic puts a self-contained kernel's dynamic section, its only
// writable bytes, in its one read-only segment: a warm load then maps one
// segment with one mmap, not a reserved span and two segments (three calls).
// glibc before 2.35 writes relocated addresses into a loaded object's dynamic
// section, so there such an object could not go through dlopen (private
// copies do): only where this process's glibc is 2.35 or later. The glibc
// version is in every key (the host's identity), so keys follow the choice.
bool glibc_reads_readonly_dynamic() {
  static const bool yes = [] {
    unsigned major = 0, minor = 0;
    if (std::sscanf(::gnu_get_libc_version(), "%u.%u", &major, &minor) != 2) return false;
    return major > 2 || (major == 2 && minor >= 35);
  }();
  return yes;
}

// Without C runtime start and end files nothing runs a kernel's static
// destructors before it is unloaded (a later exit would call into unmapped
// code), so a kernel must not have them; the prelude's kernels never do.
constexpr std::array kStaticLifetimeSections = {".init_array", ".fini_array", ".ctors", ".dtors", ".init", ".fini"};
constexpr std::array kExitRegistrations = {"__cxa_atexit", "atexit", "__cxa_thread_atexit", "__cxa_thread_atexit_impl"};

struct ObjectFacts {
  std::string problem;          // empty when the object may become a kernel; else why not
  bool needs_libraries = false;  // it refers to symbols it does not define
};

ObjectFacts inspect(const std::vector<char>& object) {
  ObjectFacts facts;
  auto parsed = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "kernel.o"));
  if (!parsed) {
    facts.problem = "kiln: the compiled object cannot be read: " + llvm::toString(parsed.takeError()) + "\n";
    return facts;
  }
  for (const llvm::object::SectionRef& section : (*parsed)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      facts.problem = "kiln: the compiled object cannot be read: " + llvm::toString(name.takeError()) + "\n";
      return facts;
    }
    for (const char* forbidden : kStaticLifetimeSections) {
      if (name->starts_with(forbidden)) {
        facts.problem = "kiln: the kernel has static constructors or destructors (section " + name->str() +
                        "); kernels may not have objects with static storage that need them\n";
        return facts;
      }
    }
  }
  for (const llvm::object::SymbolRef& symbol : (*parsed)->symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) continue;
    for (const char* forbidden : kExitRegistrations) {
      if (*name == forbidden) {
        facts.problem = "kiln: the kernel registers an exit handler (" + name->str() +
                        ": a static object with a destructor); kernels may not have objects with static storage "
                        "that need one\n";
        return facts;
      }
    }
    llvm::Expected<std::uint32_t> flags = symbol.getFlags();
    if (!flags || (*flags & llvm::object::SymbolRef::SF_Undefined) != 0) facts.needs_libraries = true;
  }
  return facts;
}

// lld's ELF driver keeps its state in globals: one link at a time, under
// llvm_options_mutex() held exclusively (lld also resets LLVM's options).
bool lld_spent = false;  // guarded by that lock: lld said it cannot run again in this process

// The file a function of this process was loaded from: the C and math
// libraries the kernel will be bound against when it is loaded here.
std::string library_of(const void* function, const char* what, std::string& error) {
  Dl_info info{};
  if (::dladdr(function, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] != '/') {
    error = std::string("kiln: cannot find the file of the ") + what + " library to link kernels against";
    return {};
  }
  return info.dli_fname;
}

// kiln-link-XXXXXX folders are removed by the link that made them; a compile
// killed meanwhile leaves its folder behind. Those older than this (no link
// takes a minute) are swept, as the cache sweeps its writers' temporaries.
constexpr std::chrono::hours kOrphanedScratchAge{1};
constexpr std::string_view kScratchPrefix = "kiln-link-";

// The exact shape of a name mkdtemp made from "kiln-link-XXXXXX".
bool is_scratch_name(std::string_view name) {
  if (name.size() != kScratchPrefix.size() + 6 || !name.starts_with(kScratchPrefix)) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(kScratchPrefix.size()), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// What a link writes in its folder: its input, its output, and lld's
// temporary output (FileOutputBuffer's "<output>.tmp" and seven characters).
bool is_scratch_file(std::string_view name) {
  return name == "kernel.o" || name == "kernel.so" || name.starts_with("kernel.so.tmp");
}

// Removes one left-over folder `name` of `parent` (open as `parent_fd`) when
// it holds only what a link writes; through descriptors (*at calls, no link
// followed), so nothing outside it can be reached by renaming things meanwhile.
void remove_scratch(int parent_fd, const char* name) {
  const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* folder = ::fdopendir(fd);
  if (folder == nullptr) {
    ::close(fd);
    return;
  }
  std::vector<std::string> files;
  bool only_ours = true;
  while (const dirent* entry = ::readdir(folder)) {
    const std::string_view file = entry->d_name;
    if (file == "." || file == "..") continue;
    struct stat info {};
    if (!is_scratch_file(file) || ::fstatat(fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(info.st_mode)) {
      only_ours = false;
      break;
    }
    files.emplace_back(file);
  }
  if (only_ours) {
    for (const std::string& file : files) ::unlinkat(fd, file.c_str(), 0);
    ::unlinkat(parent_fd, name, AT_REMOVEDIR);  // fails, harmlessly, if something arrived meanwhile
  }
  ::closedir(folder);  // closes fd
}

// Sweeps `parent` once per process: the folders of killed links, only those
// of exactly that name shape, real folders (no links), owned by this user,
// last modified over kOrphanedScratchAge ago, holding nothing but what a link
// writes. Best effort and silent: what stays harms nothing.
void sweep_orphaned_scratch(const std::string& parent) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  {
    std::lock_guard lock(mutex);
    if (!swept.insert(parent).second) return;
  }
  DIR* folder = ::opendir(parent.c_str());
  if (folder == nullptr) return;
  const int parent_fd = ::dirfd(folder);
  const auto cutoff = std::chrono::system_clock::now() - kOrphanedScratchAge;
  while (const dirent* entry = ::readdir(folder)) {
    if (!is_scratch_name(entry->d_name)) continue;
    struct stat info {};
    if (::fstatat(parent_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::geteuid() || std::chrono::system_clock::from_time_t(info.st_mtime) > cutoff)
      continue;
    remove_scratch(parent_fd, entry->d_name);
  }
  ::closedir(folder);
}

// A private folder for one link's input and output, removed on every path
// out: in $TMPDIR, or in /tmp when $TMPDIR is missing or cannot be written
// (a message naming each folder when neither can be).
class ScratchFolder {
 public:
  explicit ScratchFolder(std::string& error) {
    std::vector<std::pair<std::string, const char*>> parents;  // a folder, and how it was chosen
    if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && tmpdir[0] != '\0') {
      parents.emplace_back(tmpdir, " ($TMPDIR)");
    }
    if (parents.empty() || parents.front().first != "/tmp") parents.emplace_back("/tmp", "");
    std::string failures;
    for (const auto& [parent, chosen] : parents) {
      const std::string pattern = parent + "/" + std::string(kScratchPrefix) + "XXXXXX";
      std::string path = pattern;  // mkdtemp fills in the Xs, even when it fails
      if (::mkdtemp(path.data()) != nullptr) {
        path_ = path;
        sweep_orphaned_scratch(parent);
        return;
      }
      const int failure = errno;
      failures += (failures.empty() ? "" : "; ") + pattern + chosen + ": " + std::strerror(failure);
    }
    error = "kiln: cannot make a temporary folder for linking: " + failures + "\n";
  }
  ~ScratchFolder() {
    std::error_code ignored;  // best effort: a leftover folder is swept by a later process
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

bool write_file(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out.flush());
}

bool read_file(const std::filesystem::path& path, std::vector<char>& bytes) {
  std::ifstream in(path, std::ios::binary);
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad() && !bytes.empty();
}

}  // namespace

std::string linker_identity() {
  // lld is released with LLVM (Debian's liblld lacks lld's own version header).
  std::string text = "lld " LLVM_VERSION_STRING ";";
  for (const char* flag : kFlags) text += std::string(" ") + flag;
  text += std::string(" -z ") + kRelroWithLibraries + "|" + kRelroSelfContained;
  return glibc_reads_readonly_dynamic() ? text + " -z rodynamic when self-contained" : text;
}

Linked link_shared_object(const std::vector<char>& object) {
  Linked linked;
  const ObjectFacts facts = inspect(object);
  if (!facts.problem.empty()) {
    linked.diagnostics = facts.problem;
    return linked;
  }
  // The libraries only for an object that refers to symbols it does not
  // define: reading their symbol tables (libstdc++'s is large) was ~5% of a
  // compile, and most kernels call nothing.
  std::vector<std::string> libraries;
  if (facts.needs_libraries) {
    libraries.push_back(library_of(reinterpret_cast<const void*>(static_cast<double (*)(double)>(&::cos)), "math",
                                   linked.diagnostics));
    libraries.push_back(library_of(reinterpret_cast<const void*>(&::getpid), "C", linked.diagnostics));
    // For the C++ ABI's guard functions (function-local statics).
    libraries.push_back(library_of(reinterpret_cast<const void*>(&__cxxabiv1::__cxa_guard_acquire), "C++ support",
                                   linked.diagnostics));
    if (!linked.diagnostics.empty()) return linked;
  }
  ScratchFolder scratch(linked.diagnostics);
  if (scratch.path().empty()) return linked;
  const std::string input = (scratch.path() / "kernel.o").string();
  const std::string output = (scratch.path() / "kernel.so").string();
  if (!write_file(input, object)) {
    linked.diagnostics = "kiln: cannot write " + input + " for linking: " + std::strerror(errno);
    return linked;
  }

  std::vector<const char*> args = {"ld.lld"};
  args.insert(args.end(), kFlags.begin(), kFlags.end());
  args.push_back("-z");
  args.push_back(facts.needs_libraries ? kRelroWithLibraries : kRelroSelfContained);
  if (!facts.needs_libraries && glibc_reads_readonly_dynamic()) {
    args.push_back("-z");
    args.push_back("rodynamic");
  }
  for (const char* arg : {"-o", output.c_str(), input.c_str()}) args.push_back(arg);
  for (const std::string& library : libraries) args.push_back(library.c_str());

  std::string messages;
  llvm::raw_string_ostream message_stream(messages);
  lld::Result result{};
  {
    std::unique_lock lock(llvm_options_mutex());
    if (lld_spent) {
      linked.diagnostics = "kiln: lld failed earlier in this process and cannot link again; restart the process\n";
      return linked;
    }
    result = lld::lldMain(args, message_stream, message_stream, {{lld::Gnu, &lld::elf::link}});
    // After an internal error lld cannot clean up its globals: trust no later link.
    lld_spent = !result.canRunAgain;
    reapply_llvm_options();  // lld reset them to LLVM's defaults
  }
  message_stream.flush();
  if (result.retCode != 0) {
    linked.diagnostics = "kiln: linking the kernel failed: " + (messages.empty() ? std::string("lld gave no reason\n") : messages);
    return linked;
  }
  if (!read_file(output, linked.shared_object)) {
    linked.diagnostics = "kiln: cannot read the linked kernel " + output;
    return linked;
  }
  linked.diagnostics = messages;
  linked.ok = true;
  return linked;
}

}  // namespace kiln::jit::compiler
