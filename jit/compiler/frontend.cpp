#include "jit/compiler/frontend.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <mutex>
#include <shared_mutex>

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Driver/Tool.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include "jit/compiler/llvm_options.hpp"
#include "jit/compiler/prelude_pch.hpp"

namespace kiln::jit::compiler {
namespace {

// The placeholder main file the driver sees; every compile replaces it.
constexpr const char* kPlaceholderFile = "kiln-kernel-placeholder.cpp";

// The flags of every compile, generic or specialised alike, so that the two
// differ only in their source. -ffp-contract is the request's (clang's default
// "on": a*b+c within one expression may fuse). -fno-math-errno: kernel sources have
// no headers and cannot read errno, and keeping errno alive stops sqrt & co.
// from becoming instructions and from vectorising.
// No unwind tables, address-significance table or ident: kernels are leaf C
// functions that never throw, and each extra section costs every warm load
// (the dynamic loader maps and relocates what a shared object carries).
constexpr std::array kFlags = {"-std=c++20",       "-fPIC",      "-fno-exceptions",
                               "-fno-rtti",        "-fno-math-errno", "-fno-asynchronous-unwind-tables",
                               "-fno-unwind-tables", "-fno-addrsig",  "-fno-ident"};

// Diagnostics as plain text: no colours, no line wrapping.
llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> plain_diagnostic_options() {
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options(new clang::DiagnosticOptions);
  options->ShowColors = false;
  options->MessageLength = 0;
  return options;
}

bool is_pair_to_drop(std::string_view arg) {
  return arg == "-target-cpu" || arg == "-tune-cpu" || arg == "-target-feature" || arg == "-o";
}

bool valid_opt_level(std::string_view level) {
  static constexpr std::array kLevels = {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"};
  for (std::string_view known : kLevels) {
    if (level == known) return true;
  }
  return false;
}

// getHostCPUFeatures() is an unordered map: sorted by name (not by sign, so
// "+avx2" sits beside "-avx512f"), the same host always gives the same string.
std::string sorted_host_features() {
  std::vector<std::string> features;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    // Appended, not "+" + str(): GCC 12 warns falsely (-Wrestrict) on that concatenation.
    std::string feature(1, entry.getValue() ? '+' : '-');
    feature.append(entry.getKey().data(), entry.getKey().size());
    features.push_back(std::move(feature));
  }
  std::sort(features.begin(), features.end(),
            [](const std::string& a, const std::string& b) { return a.compare(1, std::string::npos, b, 1) < 0; });
  std::string joined;
  for (const auto& feature : features) {
    if (!joined.empty()) joined += ',';
    joined += feature;
  }
  return joined;
}

void register_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();  // inline asm in kernels
  });
}

}  // namespace

std::string Frontend::flags() {
  std::string joined;
  for (std::string_view flag : kFlags) {
    if (!joined.empty()) joined += ' ';
    joined += flag;
  }
  if (const std::string options = llvm_options_text(); !options.empty()) joined += " " + options;
  return joined;
}

std::unique_ptr<Frontend> Frontend::create(const std::string& resource_dir, std::string& error) {
  // Debian's clang silently falls back to another resource dir when this one is
  // wrong; refuse it instead.
  if (!llvm::sys::fs::is_regular_file(resource_dir + "/include/stddef.h")) {
    error = "kiln: clang resource directory '" + resource_dir + "' has no include/stddef.h";
    return nullptr;
  }
  register_native_target();
  {
    std::unique_lock lock(llvm_options_mutex());
    reapply_llvm_options();  // until the first link, which sets them again
  }

  std::string driver_messages;
  llvm::raw_string_ostream driver_stream(driver_messages);
  auto options = plain_diagnostic_options();
  clang::TextDiagnosticPrinter printer(driver_stream, options.get());
  clang::DiagnosticsEngine diagnostics(new clang::DiagnosticIDs, options, &printer, /*ShouldOwnClient=*/false);

  clang::driver::Driver driver(KILN_CLANG_EXECUTABLE, llvm::sys::getProcessTriple(), diagnostics);
  driver.setCheckInputsExist(false);  // the source only ever lives in memory
  std::vector<const char*> args = {"clang++"};
  args.insert(args.end(), kFlags.begin(), kFlags.end());
  for (const char* arg : {"-O3", "-fno-color-diagnostics", "-fmessage-length=0", "-c", kPlaceholderFile,
                          "-resource-dir", resource_dir.c_str()}) {
    args.push_back(arg);
  }
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(args));
  driver_stream.flush();
  if (!compilation || diagnostics.hasErrorOccurred()) {
    error = "kiln: clang's driver rejected its arguments: " + driver_messages;
    return nullptr;
  }
  const auto& jobs = compilation->getJobs();
  if (jobs.size() != 1 || std::string_view(jobs.begin()->getCreator().getName()) != "clang") {
    error = "kiln: clang's driver planned " + std::to_string(jobs.size()) + " jobs instead of one cc1 job";
    return nullptr;
  }

  std::unique_ptr<Frontend> frontend(new Frontend);
  frontend->resource_dir_ = resource_dir;
  frontend->host_cpu_ = llvm::sys::getHostCPUName().str();
  frontend->host_features_ = sorted_host_features();
  if (!frontend->load_known_features(error)) return nullptr;
  frontend->host_prefers_gathers_ = frontend->fast_gather(frontend->host_cpu_);
  const auto& cc1 = jobs.begin()->getArguments();
  for (std::size_t i = 0; i < cc1.size(); ++i) {
    std::string_view arg = cc1[i];
    if (i == 0 && arg == "-cc1") continue;
    // Per compile, the request names the CPU and features (the cache key's), and
    // tuning follows the CPU as with -march. The object goes to memory.
    if (is_pair_to_drop(arg)) {
      ++i;
      continue;
    }
    // -disable-free makes clang leak its AST, module and TargetMachine on
    // purpose (a compiler process exits anyway): ~0.5 MB per compile here.
    if (arg == "-disable-free") continue;
    if (arg == "-O3") frontend->opt_index_ = frontend->cc1_args_.size();
    if (arg == kPlaceholderFile) frontend->file_name_indices_.push_back(frontend->cc1_args_.size());
    frontend->cc1_args_.emplace_back(arg);
  }
  if (frontend->opt_index_ == 0 || frontend->file_name_indices_.empty()) {
    error = "kiln: unexpected cc1 arguments from clang's driver (no -O3 or no input file)";
    return nullptr;
  }
  return frontend;
}

bool Frontend::load_known_features(std::string& error) {
  // LLVM prints an unknown -target-feature to stderr and ignores it; kiln
  // refuses it instead, so an object never targets less than its key names.
  const std::string triple = llvm::sys::getProcessTriple();
  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
  if (target == nullptr) {
    error = "kiln: LLVM has no target for " + triple + ": " + lookup_error;
    return false;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  if (!info) {
    error = "kiln: LLVM cannot describe the features of " + triple;
    return false;
  }
  for (const auto& feature : info->getAllProcessorFeatures()) known_features_.insert(feature.Key);
  subtargets_ = std::move(info);
  return true;
}

bool Frontend::fast_gather(std::string_view cpu) const {
  // Asked only of a CPU LLVM knows (a CPU it does not know it names on stderr;
  // clang refuses the compile with a message of its own).
  if (known_features_.count("fast-gather") == 0 || !subtargets_->isCPUStringValid(cpu)) return false;
  const std::string triple = llvm::sys::getProcessTriple();
  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
  if (target == nullptr) return false;
  const std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, cpu, ""));
  return info && info->checkFeatures("+fast-gather");
}

bool Frontend::prefer_gathers(std::string_view cpu) const {
  if (known_features_.count("prefer-no-gather") == 0) return true;  // no such choice on this target
  return cpu == host_cpu_ ? host_prefers_gathers_ : fast_gather(cpu);
}

Frontend::Frontend() : preludes_(std::make_unique<PreludeCache>()) {}
Frontend::~Frontend() = default;

std::size_t Frontend::prelude_builds() const { return preludes_->builds(); }

// The cc1 arguments of `request` with `file_name` as the input (and the name
// of the main file); `owned` holds the strings they point into. Empty, with
// `why`, when the request is refused.
std::vector<const char*> Frontend::arguments(const Request& request, const std::string& file_name,
                                             std::deque<std::string>& owned, std::string& why) const {
  if (!valid_opt_level(request.opt_level)) {
    why = "kiln: unsupported optimisation level '" + std::string(request.opt_level) + "'\n";
    return {};
  }
  if (request.fp_contract != "on" && request.fp_contract != "off" && request.fp_contract != "fast") {
    why = "kiln: unsupported multiply-add contraction '" + std::string(request.fp_contract) + "' (on, off, fast)\n";
    return {};
  }
  // No CPU named: the host's, as -march=native would pick it.
  const bool host = request.cpu.empty();
  const std::string_view cpu = host ? std::string_view(host_cpu_) : request.cpu;

  std::vector<const char*> args;
  args.reserve(cc1_args_.size() + 64);
  for (const auto& arg : cc1_args_) args.push_back(arg.c_str());
  args[opt_index_] = owned.emplace_back(request.opt_level).c_str();
  for (std::size_t index : file_name_indices_) args[index] = file_name.c_str();
  args.push_back(owned.emplace_back("-ffp-contract=" + std::string(request.fp_contract)).c_str());
  args.push_back("-target-cpu");
  args.push_back(owned.emplace_back(cpu).c_str());
  // Neighbour reads: AVX2/AVX-512 gathers, or one scalar load per lane
  // (LLVM's prefer-no-gather, clang's -mno-gather). By the CPU's tuning in
  // LLVM (prefer_gathers(): fast-gather), then the request's features, which
  // may name prefer-no-gather either way (KILN_GATHER). Measured both ways
  // (docs/performance.md): on a Zen 4 EPYC (znver4, no fast-gather) gathers
  // lost by far (the w diffusion 27 -> 15.5 ms with scalar loads); on an
  // Emerald Rapids Xeon (fast-gather) they won: GT4Py's diffusion programs
  // 0.75-1.02x of the scalar loads' time, the granule's gather kernels in
  // Fortran order 0.84-0.88x, except its turbulence temporaries (1.10-1.17x).
  // LLVM 19 itself emits AVX-512 gathers for every AVX-512 CPU, Zen 4's too. The CPU
  // (the host's identity, or the name), the rule (this module's bytes) and
  // the request's features are all in the key.
  if (!prefer_gathers(cpu)) {
    args.push_back("-target-feature");
    args.push_back("+prefer-no-gather");
  }
  // The host's features, then the request's (the later of two signs wins).
  std::string joined;
  if (host && !request.features.empty()) joined = host_features_ + "," + std::string(request.features);
  std::string_view features = !host ? request.features : joined.empty() ? std::string_view(host_features_) : joined;
  while (!features.empty()) {
    const auto comma = features.find(',');
    const std::string_view feature = features.substr(0, comma);
    features = comma == std::string_view::npos ? std::string_view() : features.substr(comma + 1);
    if (feature.empty()) continue;
    if (feature[0] != '+' && feature[0] != '-') {
      why = "kiln: target feature '" + std::string(feature) + "' does not start with + or -\n";
      return {};
    }
    if (known_features_.count(feature.substr(1)) == 0) {
      why = "kiln: target feature '" + std::string(feature) + "' is unknown to LLVM " LLVM_VERSION_STRING "\n";
      return {};
    }
    args.push_back("-target-feature");
    args.push_back(owned.emplace_back(feature).c_str());
  }
  return args;
}

Outcome Frontend::compile(const Request& request) const {
  const std::shared_lock options_lock(llvm_options_mutex());  // no link resets them meanwhile
  const std::string file_name = request.file_name.empty() ? "kernel.cpp" : std::string(request.file_name);
  std::deque<std::string> owned;  // strings the argument vectors point into (stable addresses)
  std::string why;
  const std::vector<const char*> args = arguments(request, file_name, owned, why);
  if (args.empty()) {
    Outcome refused;
    refused.diagnostics = why;
    return refused;
  }
  // The prelude from its PCH, the rest parsed. Only a compile with nothing to
  // say is taken: with an error or a warning, the whole source is compiled as
  // before, so messages (their file names and lines, and no "In file included
  // from" for the PCH's header) are exactly what they were without it.
  const std::size_t prelude = request.reuse_prelude ? prelude_length(request.source) : 0;
  if (prelude != 0) {
    const std::string header_name = kPreludeHeaderPath;
    const std::vector<const char*> header_args = arguments(request, header_name, owned, why);
    if (const auto pch = preludes_->get(request.source.substr(0, prelude), header_args)) {
      Outcome outcome = run(args, request.source.substr(prelude), file_name, pch.get());
      if (outcome.ok && outcome.diagnostics.empty()) {
        outcome.used_prelude = true;
        return outcome;
      }
    }
  }
  return run(args, request.source, file_name, nullptr);
}

Outcome Frontend::run(const std::vector<const char*>& args, std::string_view source, const std::string& file_name,
                      const PrecompiledPrelude* prelude) const {
  Outcome outcome;
  llvm::raw_string_ostream diagnostic_stream(outcome.diagnostics);
  auto fail = [&](std::string_view why) {
    diagnostic_stream << why;
    diagnostic_stream.flush();
    return std::move(outcome);
  };
  auto options = plain_diagnostic_options();
  clang::TextDiagnosticPrinter printer(diagnostic_stream, options.get());
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  {
    clang::DiagnosticsEngine argument_diagnostics(new clang::DiagnosticIDs, options, &printer, false);
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, args, argument_diagnostics, KILN_CLANG_EXECUTABLE) ||
        argument_diagnostics.hasErrorOccurred()) {
      return fail("kiln: clang rejected the compile arguments\n");
    }
  }
  invocation->getFrontendOpts().DisableFree = false;  // see create(): never leak on purpose
  invocation->getCodeGenOpts().DisableFree = false;
  invocation->getDiagnosticOpts().ShowColors = false;
  invocation->getDiagnosticOpts().MessageLength = 0;
  if (prelude != nullptr) invocation->getPreprocessorOpts().ImplicitPCHInclude = kPreludePchPath;
  // The source lives only in memory: clang reads it under `file_name`. We keep
  // ownership (declared before the instance, so it outlives it): clang frees a
  // remapped buffer only once its preprocessor exists, which an early failure
  // (an unknown CPU) never reaches.
  const std::unique_ptr<llvm::MemoryBuffer> source_buffer =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()), file_name);
  invocation->getPreprocessorOpts().addRemappedFile(file_name, source_buffer.get());
  invocation->getPreprocessorOpts().RetainRemappedFileBuffers = true;

  clang::CompilerInstance instance;
  instance.setInvocation(std::move(invocation));
  instance.setVerboseOutputStream(diagnostic_stream);  // "2 errors generated." (else stderr)
  instance.createDiagnostics(new clang::TextDiagnosticPrinter(diagnostic_stream, &instance.getDiagnosticOpts()),
                             /*ShouldOwnClient=*/true);
  if (prelude != nullptr) instance.createFileManager(prelude->file_system());

  // clang's own back end writes the object (exactly what `clang++ -c` emits for
  // these arguments) into memory: a stream handed to the instance wins over -o.
  llvm::SmallVector<char, 0> object;
  instance.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
  clang::EmitObjAction action;  // owns its LLVMContext
  const bool ok = instance.ExecuteAction(action) && !instance.getDiagnostics().hasErrorOccurred();
  diagnostic_stream.flush();
  if (!ok) {
    if (outcome.diagnostics.empty()) outcome.diagnostics = "kiln: clang failed without a message\n";
    return outcome;
  }
  if (object.empty()) return fail("kiln: clang produced an empty object\n");
  outcome.object.assign(object.begin(), object.end());
  outcome.ok = true;
  return outcome;
}

}  // namespace kiln::jit::compiler
