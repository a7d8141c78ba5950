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

  using KernelMap = std::map<std::string, std::shared_ptr<const KernelInfo>, std::less<>>;

  mutable std::mutex mutex_;
  // Copied on write: every Registry starts with the one map of embedded kernels
  // (parsed once per process), so making a Runtime copies nothing; add() makes
  // this Registry's own. KernelInfos are shared, so their addresses survive.
  std::shared_ptr<const KernelMap> kernels_;
};

}  // namespace kiln::runtime
