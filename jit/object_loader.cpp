#include "jit/object_loader.hpp"

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "jit/log.hpp"

namespace kiln::jit {
namespace {

namespace orc = llvm::orc;

constexpr const char* kLibm = "libm.so.6";  // glibc's soname

[[noreturn]] void fail(const std::string& context, llvm::Error error) {
  throw std::runtime_error(context + ": " + llvm::toString(std::move(error)));
}

// An ExecutionSession with RuntimeDyld as its object layer. RuntimeDyld rather
// than JITLink: it loads a small kernel object slightly faster and, unlike
// JITLink in LLVM 19, scales linearly with object size (see toolchain notes).
// No TargetMachine and no code generator: linking needs neither.
class OrcObjectLoader final : public ObjectLoader {
 public:
  OrcObjectLoader(std::unique_ptr<orc::ExecutionSession> session, orc::JITDylib& process_symbols)
      : session_(std::move(session)),
        layer_(*session_, [] { return std::make_unique<llvm::SectionMemoryManager>(); }),
        process_symbols_(process_symbols) {
    // ORC reports some failures (an unresolved symbol, say) only here, while the
    // lookup fails with a vaguer "Failed to materialize symbols": keep them for
    // the exception. Reported under mutex_ (lookups run in the calling thread).
    session_->setErrorReporter([this](llvm::Error error) {
      const std::string message = llvm::toString(std::move(error));
      log().debug("kiln jit: ORC: {}", message);
      if (!reported_.empty()) reported_ += "; ";
      reported_ += message;
    });
  }

  ~OrcObjectLoader() override {
    // Frees every linked object's memory: kernels must not be called after this.
    if (auto error = session_->endSession()) {
      log().warn("kiln jit: ending the ORC session failed: {}", llvm::toString(std::move(error)));
    }
  }

  Linked link(std::span<const char> object, const std::string& symbol, const std::string& what) override {
    std::lock_guard lock(mutex_);
    reported_.clear();
    const std::string context = "kiln: cannot link " + what;
    // A fresh JITDylib per object: same-named symbols in two objects never clash.
    const std::uint64_t id = next_id_++;
    auto& dylib = session_->createBareJITDylib(symbol + "#" + std::to_string(id));
    dylib.addToLinkOrder(process_symbols_);
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), what);
    if (auto error = layer_.add(dylib, std::move(buffer))) {
      discard(dylib);
      fail(context, std::move(error));
    }
    auto found = session_->lookup({&dylib}, session_->intern(symbol));
    if (!found) {
      auto error = found.takeError();
      discard(dylib);
      std::string reason = llvm::toString(std::move(error));
      if (!reported_.empty()) reason += " (" + reported_ + ")";
      throw std::runtime_error(context + " (symbol '" + symbol + "'): " + reason);
    }
    linked_.emplace(id, &dylib);
    return {found->getAddress().toPtr<void*>(), id};
  }

  void unload(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    const auto it = linked_.find(id);
    if (it == linked_.end()) return;
    discard(*it->second);
    linked_.erase(it);
  }

 private:
  void discard(orc::JITDylib& dylib) {
    if (auto error = session_->removeJITDylib(dylib)) {
      log().warn("kiln jit: removing a JITDylib failed: {}", llvm::toString(std::move(error)));
    }
  }

  std::mutex mutex_;  // guards link() and unload(): one link at a time keeps ORC's state simple
  std::unique_ptr<orc::ExecutionSession> session_;
  orc::RTDyldObjectLinkingLayer layer_;  // destroyed before session_
  orc::JITDylib& process_symbols_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, orc::JITDylib*> linked_;  // by link() id, until unload()
  std::string reported_;  // what ORC's error reporter said during the current load
};

}  // namespace

std::unique_ptr<ObjectLoader> ObjectLoader::create() {
  auto control = orc::SelfExecutorProcessControl::Create();
  if (!control) fail("kiln: cannot set up ORC", control.takeError());
  auto session = std::make_unique<orc::ExecutionSession>(std::move(*control));

  // Symbols of the process itself (libm's pow, memcpy, ...), searched after
  // each object's own definitions. ELF has no global symbol prefix.
  const llvm::Triple triple(llvm::sys::getProcessTriple());
  const char global_prefix = triple.isOSBinFormatMachO() ? '_' : '\0';
  auto generator = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(global_prefix);
  if (!generator) {
    auto error = generator.takeError();
    llvm::consumeError(session->endSession());
    fail("kiln: cannot set up ORC process symbols", std::move(error));
  }
  auto& process_symbols = session->createBareJITDylib("<process>");
  process_symbols.addGenerator(std::move(*generator));
  // libm by name as well: when libkiln itself is dlopen'ed RTLD_LOCAL by a
  // program that does not link libm, libm is not in the global scope.
  if (auto libm = orc::DynamicLibrarySearchGenerator::Load(kLibm, global_prefix)) {
    process_symbols.addGenerator(std::move(*libm));
  } else {
    log().debug("kiln jit: {} not added to the process symbols: {}", kLibm, llvm::toString(libm.takeError()));
  }
  return std::make_unique<OrcObjectLoader>(std::move(session), process_symbols);
}

}  // namespace kiln::jit
