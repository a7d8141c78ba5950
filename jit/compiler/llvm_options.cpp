#include "jit/compiler/llvm_options.hpp"

#include <array>
#include <vector>

#include <llvm/Support/CommandLine.h>

namespace kiln::jit::compiler {
namespace {

#if defined(__x86_64__)
constexpr std::array<const char*, 1> kOptions = {"-disable-lsr"};
#else
constexpr std::array<const char*, 0> kOptions = {};
#endif

}  // namespace

std::string llvm_options_text() {
  std::string text;
  for (const char* option : kOptions) text += std::string(text.empty() ? "" : " ") + "-mllvm " + option;
  return text;
}

std::shared_mutex& llvm_options_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

void reapply_llvm_options() {
  if (kOptions.empty()) return;
  std::vector<const char*> argv = {"kiln"};
  argv.insert(argv.end(), kOptions.begin(), kOptions.end());
  llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data());
}

}  // namespace kiln::jit::compiler
