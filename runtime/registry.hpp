// The kernels a Runtime knows: those embedded from kernels_src/ and those the
// user registers. KernelInfo addresses stay valid for the registry's life.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/kernel_source.hpp"

namespace kiln::runtime {

class Registry {
 public:
  Registry();  // holds the embedded kernels

  // Throws KernelSourceError when malformed or when the name is taken.
  const KernelInfo& add(std::string_view source, std::string_view file_name);
  // Throws UnknownKernelError listing the known names.
  const KernelInfo& get(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  const KernelInfo& insert(std::shared_ptr<const KernelInfo> info);

  mutable std::mutex mutex_;
  // shared_ptr: the embedded kernels are parsed once per process and shared by every Registry.
  std::map<std::string, std::shared_ptr<const KernelInfo>, std::less<>> kernels_;
};

}  // namespace kiln::runtime
