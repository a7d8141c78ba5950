// The kernels a Runtime knows: those embedded from kernels_src/ (a file
// <name>.kiln declares the kernel <name>) and those the user registers.
// KernelInfo addresses stay valid for the registry's life.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lang/parser.hpp"

namespace kiln::runtime {

class Registry {
 public:
  Registry();  // holds the embedded kernels

  // Throws KernelSourceError when malformed or when the name is an embedded
  // kernel's. A user kernel's name registered again: the same text changes
  // nothing; a new text replaces the old for later get()s (`replaced` set),
  // and the old KernelInfo stays valid (handles resolved from it keep it).
  // `path`: the file the source was read from (absolute), empty for text.
  const lang::KernelInfo& add(std::string_view source, std::string_view file_name, std::string_view path = {},
                              bool* replaced = nullptr);
  // Throws UnknownKernelError listing the known names.
  const lang::KernelInfo& get(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  const lang::KernelInfo& insert(std::shared_ptr<const lang::KernelInfo> info, bool* replaced);
  std::vector<std::string> names_locked() const;  // sorted; the caller holds mutex_

  using KernelMap = std::map<std::string, std::shared_ptr<const lang::KernelInfo>, std::less<>>;

  mutable std::mutex mutex_;
  // The kernels the user added (copied on write). The embedded ones live in
  // one process-wide table, each parsed the first time it is asked for:
  // parsing all of them cost ~70 µs of every process's first Runtime.
  std::shared_ptr<const KernelMap> added_;
  // Kernels replaced by a new text under their name: kept for the handles
  // and jobs that point at them, for the registry's life.
  std::vector<std::shared_ptr<const lang::KernelInfo>> replaced_;
};

}  // namespace kiln::runtime
