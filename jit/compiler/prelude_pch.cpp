#include "jit/compiler/prelude_pch.hpp"

#include <utility>

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Serialization/ASTWriter.h>
#include <clang/Serialization/PCHContainerOperations.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::jit::compiler {
namespace {

// How many (prelude, flags) pairs a process keeps: a program uses one or two
// (check mode's prelude differs by a #define), a test a few more. ~0.4 MB each.
constexpr std::size_t kKeptPreludes = 8;

constexpr std::string_view kEndMarker = "\n#line 1 \"<kiln generated";

// clang's own -emit-pch action (a TU_Prefix, CompilingPCH), writing the AST
// into memory instead of a file.
class PchToMemory : public clang::GeneratePCHAction {
 public:
  explicit PchToMemory(std::shared_ptr<clang::PCHBuffer> buffer) : buffer_(std::move(buffer)) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& instance, llvm::StringRef) override {
    return std::make_unique<clang::PCHGenerator>(instance.getPreprocessor(), instance.getModuleCache(), "", "",
                                                 buffer_,
                                                 llvm::ArrayRef<std::shared_ptr<clang::ModuleFileExtension>>());
  }

 private:
  std::shared_ptr<clang::PCHBuffer> buffer_;
};

// Only the header, in memory: the build reads nothing from disk, so nothing
// but the header's text and the flags goes into the PCH. `header` ends with a
// NUL (a std::string's), as clang's lexer needs.
llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> header_only(const std::string& header) {
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> files(new llvm::vfs::InMemoryFileSystem);
  files->addFile(kPreludeHeaderPath, 0, llvm::MemoryBuffer::getMemBuffer(header, kPreludeHeaderPath));
  return files;
}

std::shared_ptr<const PrecompiledPrelude> build(std::string_view header_text, const std::vector<const char*>& args) {
  auto prelude = std::make_shared<PrecompiledPrelude>();
  prelude->header.assign(header_text.data(), header_text.size());
  std::string messages;
  llvm::raw_string_ostream stream(messages);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options(new clang::DiagnosticOptions);
  options->ShowColors = false;
  clang::TextDiagnosticPrinter printer(stream, options.get());
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  {
    clang::DiagnosticsEngine argument_diagnostics(new clang::DiagnosticIDs, options, &printer, false);
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, argument_diagnostics) ||
        argument_diagnostics.hasErrorOccurred())
      return nullptr;
  }
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;
  invocation->getFrontendOpts().ProgramAction = clang::frontend::GeneratePCH;
  invocation->getFrontendOpts().Inputs = {
      clang::FrontendInputFile(kPreludeHeaderPath, clang::InputKind(clang::Language::CXX).getHeader())};

  clang::CompilerInstance instance;
  instance.setInvocation(std::move(invocation));
  instance.setVerboseOutputStream(stream);
  instance.createDiagnostics(new clang::TextDiagnosticPrinter(stream, &instance.getDiagnosticOpts()), true);
  instance.createFileManager(header_only(prelude->header));
  auto buffer = std::make_shared<clang::PCHBuffer>();
  buffer->IsComplete = false;
  PchToMemory action(buffer);
  const bool ok = instance.ExecuteAction(action) && !instance.getDiagnostics().hasErrorOccurred();
  stream.flush();
  if (!ok || !buffer->IsComplete || !messages.empty()) return nullptr;
  prelude->pch.assign(buffer->Data.begin(), buffer->Data.end());
  return prelude;
}

}  // namespace

std::size_t prelude_length(std::string_view source) {
  const std::size_t at = source.find(kEndMarker);
  return at == std::string_view::npos ? 0 : at + 1;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> PrecompiledPrelude::file_system() const {
  // Per compile (an InMemoryFileSystem is not made for concurrent use); the
  // buffers point into this prelude, which the compile holds.
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory = header_only(header);
  memory->addFile(kPreludePchPath, 0,
                  llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(pch.data(), pch.size()), kPreludePchPath, false));
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> files(
      new llvm::vfs::OverlayFileSystem(llvm::vfs::getRealFileSystem()));
  files->pushOverlay(memory);
  return files;
}

std::shared_ptr<const PrecompiledPrelude> PreludeCache::get(std::string_view header,
                                                            const std::vector<const char*>& args) {
  std::string key;
  for (const char* arg : args) key.append(arg).push_back('\0');
  key.push_back('\0');
  key.append(header.data(), header.size());
  {
    const std::lock_guard lock(mutex_);
    auto found = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key) found = it;
    if (found == entries_.end()) {
      // First seen: parsed with its kernel, as without a PCH. A process that
      // compiles one kernel never pays for a PCH it would not use again.
      if (entries_.size() == kKeptPreludes) entries_.erase(entries_.begin());
      entries_.push_back(Entry{std::move(key), nullptr, false});
      return nullptr;
    }
    Entry entry = std::move(*found);
    entries_.erase(found);
    entries_.push_back(std::move(entry));
    if (entries_.back().built) return entries_.back().prelude;
    entries_.back().built = true;  // this thread builds it; others parse meanwhile
    ++builds_;
  }
  // Built unlocked (~10 ms of CPU): the compiles of other threads go on.
  std::shared_ptr<const PrecompiledPrelude> prelude = build(header, args);
  const std::lock_guard lock(mutex_);
  for (Entry& entry : entries_)
    if (entry.key == key) entry.prelude = prelude;  // unless dropped meanwhile
  return prelude;
}

std::size_t PreludeCache::builds() const {
  const std::lock_guard lock(mutex_);
  return builds_;
}

}  // namespace kiln::jit::compiler
