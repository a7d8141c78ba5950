#include "runtime/registry.hpp"

#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/cache_key.hpp"

namespace kiln::runtime {

namespace {

// Parsed, with the digest cache keys take (computed here once, not per key).
std::shared_ptr<const KernelInfo> parse(std::string_view source, std::string_view file_name) {
  KernelInfo info = parse_kernel_source(source, file_name);
  info.source_digest = text_digest(info.source);
  return std::make_shared<const KernelInfo>(std::move(info));
}

}  // namespace

Registry::Registry() {
  // A duplicate name among the embedded kernels throws here, in the first Runtime.
  static const std::shared_ptr<const KernelMap> embedded = [] {
    auto map = std::make_shared<KernelMap>();
    for (const auto& file : kernels_src::kernels()) {
      std::shared_ptr<const KernelInfo> info = parse(file.text, file.name);
      const std::string name = info->name;
      if (!map->emplace(name, std::move(info)).second)
        throw KernelSourceError("kiln: two embedded kernels are named '" + name + "'");
    }
    return map;
  }();
  kernels_ = embedded;
}

const KernelInfo& Registry::add(std::string_view source, std::string_view file_name) {
  return insert(parse(source, file_name));
}

const KernelInfo& Registry::insert(std::shared_ptr<const KernelInfo> info) {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_->find(info->name); it != kernels_->end())
    throw KernelSourceError("kiln: " + info->file_name + ": a kernel named '" + info->name +
                            "' is already registered (from " + it->second->file_name + ")");
  auto copy = std::make_shared<KernelMap>(*kernels_);
  const KernelInfo& added = *info;
  const std::string name = info->name;
  copy->emplace(name, std::move(info));
  kernels_ = std::move(copy);
  return added;
}

const KernelInfo& Registry::get(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_->find(name); it != kernels_->end()) return *it->second;
  std::string known;
  for (const auto& [n, _] : *kernels_) known += (known.empty() ? "" : ", ") + n;
  throw UnknownKernelError("kiln: unknown kernel '" + std::string(name) + "'; known kernels: " + known);
}

std::vector<std::string> Registry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, _] : *kernels_) out.push_back(name);
  return out;
}

}  // namespace kiln::runtime
