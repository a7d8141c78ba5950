#include "runtime/registry.hpp"

#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"

namespace kiln::runtime {

namespace {

const std::vector<std::shared_ptr<const KernelInfo>>& embedded_kernels() {
  static const auto parsed = [] {
    std::vector<std::shared_ptr<const KernelInfo>> out;
    for (const auto& file : kernels_src::kernels())
      out.push_back(std::make_shared<const KernelInfo>(parse_kernel_source(file.text, file.name)));
    return out;
  }();
  return parsed;
}

}  // namespace

Registry::Registry() {
  for (const auto& info : embedded_kernels()) insert(info);
}

const KernelInfo& Registry::add(std::string_view source, std::string_view file_name) {
  return insert(std::make_shared<const KernelInfo>(parse_kernel_source(source, file_name)));
}

const KernelInfo& Registry::insert(std::shared_ptr<const KernelInfo> info) {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(info->name); it != kernels_.end())
    throw KernelSourceError("kiln: " + info->file_name + ": a kernel named '" + info->name +
                            "' is already registered (from " + it->second->file_name + ")");
  const std::string name = info->name;
  return *kernels_.emplace(name, std::move(info)).first->second;
}

const KernelInfo& Registry::get(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(name); it != kernels_.end()) return *it->second;
  std::string known;
  for (const auto& [n, _] : kernels_) known += (known.empty() ? "" : ", ") + n;
  throw UnknownKernelError("kiln: unknown kernel '" + std::string(name) + "'; known kernels: " + known);
}

std::vector<std::string> Registry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, _] : kernels_) out.push_back(name);
  return out;
}

}  // namespace kiln::runtime
